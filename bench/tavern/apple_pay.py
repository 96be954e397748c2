"""Apple Pay EC_v1 payment tokens, made as the phone's Secure Element would, for the emulator's test PKI.

Written from Apple's "Payment Token Format Reference" and from how the emulator opens a token
(Sources/SandboxEmulator/ApplePay/ApplePayTokenVerifier.swift):
  - encryption: ECDH between a fresh ephemeral P-256 key and the payment processing key, the single-step
    (Concat) KDF with SHA-256 over OtherInfo = 0x0D "id-aes256-GCM" "Apple" SHA-256(merchant id), then
    AES-256-GCM under a 16-byte zero IV (safe only because every key is used once);
  - signature: a detached CMS SignedData (SHA-256) by the signing leaf, carrying the intermediate, over the
    decoded bytes ephemeralPublicKey || data || transactionId.
"""

import base64
import calendar
import datetime
import hashlib
import json
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.concatkdf import ConcatKDFHash
from cryptography.hazmat.primitives.serialization import pkcs7

import emulator_credentials as creds

# Loaded once per process, as a long-running client would.
_LEAF = x509.load_pem_x509_certificate(creds.APPLE_PAY_LEAF_PEM.encode())
_LEAF_KEY = serialization.load_pem_private_key(creds.APPLE_PAY_LEAF_KEY_PEM.encode(), password=None)
_INTERMEDIATE = x509.load_pem_x509_certificate(creds.APPLE_PAY_INTERMEDIATE_PEM.encode())
_RECIPIENT = serialization.load_pem_public_key(creds.PAYMENT_PROCESSING_PUBLIC_KEY_PEM.encode())
_RECIPIENT_SPKI = _RECIPIENT.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
_PUBLIC_KEY_HASH = base64.b64encode(hashlib.sha256(_RECIPIENT_SPKI).digest()).decode()
_OTHER_INFO = b"\x0did-aes256-GCM" + b"Apple" + hashlib.sha256(creds.MERCHANT_IDENTIFIER.encode()).digest()

# A Visa-shaped, Luhn-valid device PAN padded with 9s, and the manufacturer id of Apple's sample payment data.
TEST_DPAN = "4817499999990046"
DEVICE_MANUFACTURER_IDENTIFIER = "040010030273"


def _expiration(today: datetime.date) -> str:
    """YYMMDD: the last day of this month three years on, shaped like a card expiry."""
    year = today.year + 3
    last_day = calendar.monthrange(year, today.month)[1]
    return f"{year % 100:02d}{today.month:02d}{last_day:02d}"


def _payment_data(amount: int, currency_numeric: str) -> bytes:
    return json.dumps({
        "applicationPrimaryAccountNumber": TEST_DPAN,
        "applicationExpirationDate": _expiration(datetime.datetime.now(datetime.timezone.utc).date()),
        "currencyCode": currency_numeric,
        "transactionAmount": amount,
        "deviceManufacturerIdentifier": DEVICE_MANUFACTURER_IDENTIFIER,
        "paymentDataType": "3DSecure",
        # A real cryptogram is 20 bytes from the Secure Element; random bytes have its shape. ECI 7: e-commerce.
        "paymentData": {"onlinePaymentCryptogram": base64.b64encode(os.urandom(20)).decode(), "eciIndicator": "7"},
    }, separators=(",", ":")).encode()


def make_token(amount: int, currency_numeric: str) -> bytes:
    """The token's bytes exactly as PassKit hands them to an app (PKPaymentToken.paymentData)."""
    if amount <= 0 or len(currency_numeric) != 3 or not currency_numeric.isdigit():
        raise ValueError(f"a token needs a positive amount in minor units and a numeric currency, got {amount} {currency_numeric!r}")
    ephemeral = ec.generate_private_key(ec.SECP256R1())
    shared = ephemeral.exchange(ec.ECDH(), _RECIPIENT)
    key = ConcatKDFHash(algorithm=hashes.SHA256(), length=32, otherinfo=_OTHER_INFO).derive(shared)
    data = AESGCM(key).encrypt(bytes(16), _payment_data(amount, currency_numeric), None)  # ciphertext || tag
    ephemeral_spki = ephemeral.public_key().public_bytes(serialization.Encoding.DER,
                                                         serialization.PublicFormat.SubjectPublicKeyInfo)
    transaction_id = os.urandom(32)
    signature = (pkcs7.PKCS7SignatureBuilder()
                 .set_data(ephemeral_spki + data + transaction_id)
                 .add_signer(_LEAF, _LEAF_KEY, hashes.SHA256())
                 .add_certificate(_INTERMEDIATE)
                 .sign(serialization.Encoding.DER, [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Binary]))
    # Key order as PassKit writes it: data, signature, header{ephemeralPublicKey, publicKeyHash, transactionId}, version.
    return json.dumps({
        "data": base64.b64encode(data).decode(),
        "signature": base64.b64encode(signature).decode(),
        "header": {"ephemeralPublicKey": base64.b64encode(ephemeral_spki).decode(),
                   "publicKeyHash": _PUBLIC_KEY_HASH, "transactionId": transaction_id.hex()},
        "version": "EC_v1",
    }, separators=(",", ":")).encode()
