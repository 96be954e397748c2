#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/cms.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/param_build.h>
#include <openssl/kdf.h>
#include <openssl/rsa.h>
#include <openssl/bio.h>

// Macros Swift cannot import, as functions.
static inline int copenssl_bio_get_mem_data(BIO *b, char **pp) { return (int)BIO_get_mem_data(b, pp); }
static inline int copenssl_evp_ctrl_gcm_set_ivlen(EVP_CIPHER_CTX *c, int len) { return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, len, NULL); }
static inline int copenssl_evp_ctrl_gcm_get_tag(EVP_CIPHER_CTX *c, int len, void *tag) { return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, len, tag); }
static inline int copenssl_evp_ctrl_gcm_set_tag(EVP_CIPHER_CTX *c, int len, void *tag) { return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, len, tag); }
// STACK_OF(X509) helpers: the sk_X509_* API is macros/inline type-checkers Swift cannot see.
static inline STACK_OF(X509) *copenssl_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int copenssl_sk_X509_push(STACK_OF(X509) *s, X509 *x) { return sk_X509_push(s, x); }
static inline int copenssl_sk_X509_num(const STACK_OF(X509) *s) { return sk_X509_num(s); }
static inline X509 *copenssl_sk_X509_value(const STACK_OF(X509) *s, int i) { return sk_X509_value(s, i); }
// Frees the stack only; the certificates are owned elsewhere.
static inline void copenssl_sk_X509_free(STACK_OF(X509) *s) { sk_X509_free(s); }
static inline int copenssl_sk_CMS_SignerInfo_num(STACK_OF(CMS_SignerInfo) *s) { return sk_CMS_SignerInfo_num(s); }
static inline CMS_SignerInfo *copenssl_sk_CMS_SignerInfo_value(STACK_OF(CMS_SignerInfo) *s, int i) { return sk_CMS_SignerInfo_value(s, i); }
// MBSTRING_UTF8 is a composed macro; expose it as a plain constant.
static inline int copenssl_mbstring_utf8(void) { return MBSTRING_UTF8; }
// EVP_PKEY_fromdata selections are composed macros.
static inline int copenssl_evp_pkey_keypair(void) { return EVP_PKEY_KEYPAIR; }
static inline int copenssl_evp_pkey_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
// OPENSSL_free is a macro (it passes __FILE__/__LINE__).
static inline void copenssl_free(void *p) { OPENSSL_free(p); }
#endif
