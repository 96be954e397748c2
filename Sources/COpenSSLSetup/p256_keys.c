#include "openssl_setup.h"
#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <string.h>

int copenssl_p256_private_scalar(const unsigned char *der, long length, int pkcs8, unsigned char *out) {
    // [0] { namedCurve prime256v1 }, as SEC1 writes the curve.
    static const unsigned char named_p256[] = {0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07};
    const unsigned char *sec1 = der;
    long sec1_length = length;
    int named = 0, ok = 0;
    PKCS8_PRIV_KEY_INFO *info = NULL;
    ASN1_SEQUENCE_ANY *fields = NULL;
    // What a refused parse records is dropped: the caller's fallback reports its own errors, and the thread (a batch
    // worker's, which lives for the batch) keeps no stale ones.
    ERR_set_mark();
    if (pkcs8) {
        const unsigned char *p = der;
        const ASN1_OBJECT *algorithm = NULL;
        const unsigned char *key = NULL;
        int key_length = 0, type = 0;
        const X509_ALGOR *parameters = NULL;
        const void *curve = NULL;
        info = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, length);
        if (info == NULL || p != der + length) goto done;
        if (!PKCS8_pkey_get0(&algorithm, &key, &key_length, &parameters, info)) goto done;
        if (OBJ_obj2nid(algorithm) != NID_X9_62_id_ecPublicKey || parameters == NULL) goto done;
        X509_ALGOR_get0(NULL, &type, &curve, parameters);
        if (type != V_ASN1_OBJECT || OBJ_obj2nid((const ASN1_OBJECT *)curve) != NID_X9_62_prime256v1) goto done;
        sec1 = key;
        sec1_length = key_length;
        named = 1;
    }
    {
        const unsigned char *p = sec1;
        fields = d2i_ASN1_SEQUENCE_ANY(NULL, &p, sec1_length);
        if (fields == NULL || p != sec1 + sec1_length || sk_ASN1_TYPE_num(fields) < 2) goto done;
        const ASN1_TYPE *version = sk_ASN1_TYPE_value(fields, 0), *scalar = sk_ASN1_TYPE_value(fields, 1);
        if (version->type != V_ASN1_INTEGER || ASN1_INTEGER_get(version->value.integer) != 1) goto done;
        if (scalar->type != V_ASN1_OCTET_STRING || ASN1_STRING_length(scalar->value.octet_string) != 32) goto done;
        for (int i = 2; i < sk_ASN1_TYPE_num(fields); i++) {
            // A context-tagged field is kept whole (tag and length too) as "other".
            const ASN1_TYPE *field = sk_ASN1_TYPE_value(fields, i);
            if (field->type != V_ASN1_OTHER) goto done;
            const unsigned char *bytes = ASN1_STRING_get0_data(field->value.asn1_string);
            int count = ASN1_STRING_length(field->value.asn1_string);
            if (count < 1) goto done;
            if (bytes[0] == 0xA0) {
                // A curve named again inside PKCS#8 must be the same one.
                if (count != (int)sizeof named_p256 || memcmp(bytes, named_p256, sizeof named_p256) != 0) goto done;
                named = 1;
            } else if (bytes[0] != 0xA1) {
                goto done;  // [1] is the public key, not read: the key's point is made again from the scalar
            }
        }
        if (!named) goto done;
        memcpy(out, ASN1_STRING_get0_data(scalar->value.octet_string), 32);
        ok = 1;
    }
done:
    sk_ASN1_TYPE_pop_free(fields, ASN1_TYPE_free);
    PKCS8_PRIV_KEY_INFO_free(info);
    ERR_pop_to_mark();
    return ok;
}
