"""The emulator's published test credentials, read from the Swift sources that define them.

`--env local` configures checkout-driver with these same values (Sources/SandboxEmulator/TestCredentials.swift,
Sources/SandboxEmulator/Bahn/BahnTestCredentials.swift, Sources/SandboxEmulator/Centra/CentraRules.swift). Reading them from there, rather than pasting copies here, keeps
one source of truth: if the emulator's keys change, the Tavern flows follow, or fail loudly naming what is missing.
"""

import functools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEST_CREDENTIALS = REPO / "Sources/SandboxEmulator/TestCredentials.swift"
BAHN_CREDENTIALS = REPO / "Sources/SandboxEmulator/Bahn/BahnTestCredentials.swift"
CENTRA_RULES = REPO / "Sources/SandboxEmulator/Centra/CentraRules.swift"


@functools.cache
def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def swift_string(path: Path, name: str) -> str:
    """The value of `static let <name> = "..."`, or of a multi-line (triple-quoted) literal, in a Swift file."""
    text = _source(path)
    multi = re.search(r'static let ' + re.escape(name) + r'\s*=\s*"""\n(.*?)\n([ \t]*)"""', text, re.S)
    if multi:
        # As Swift reads it: the closing delimiter's indentation is not part of any line.
        indent = multi.group(2)
        lines = multi.group(1).split("\n")
        return "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines) + "\n"
    single = re.search(r'static let ' + re.escape(name) + r'\s*=\s*"([^"\\]*)"', text)
    if single:
        return single.group(1)
    raise LookupError(f"no string constant {name} in {path.relative_to(REPO)}")


# Apple Pay: the stand-in chain and the payment processing key tokens are encrypted to.
APPLE_PAY_LEAF_PEM = swift_string(TEST_CREDENTIALS, "applePayLeafCertificatePEM")
APPLE_PAY_LEAF_KEY_PEM = swift_string(TEST_CREDENTIALS, "applePayLeafPrivateKeyPEM")
APPLE_PAY_INTERMEDIATE_PEM = swift_string(TEST_CREDENTIALS, "applePayIntermediateCertificatePEM")
PAYMENT_PROCESSING_PUBLIC_KEY_PEM = swift_string(TEST_CREDENTIALS, "paymentProcessingPublicKeyPEM")
MERCHANT_IDENTIFIER = swift_string(TEST_CREDENTIALS, "merchantIdentifier")

# Bahn: API key, the registered client key that signs JWS bodies, its kid, and the webhook secret.
BAHN_API_KEY = swift_string(BAHN_CREDENTIALS, "bahnAPIKey")
BAHN_SIGNING_KEY_PEM = swift_string(BAHN_CREDENTIALS, "bahnClientPrivateKeyPEM")
BAHN_KEY_ID = swift_string(BAHN_CREDENTIALS, "bahnKeyID")
BAHN_WEBHOOK_SECRET = swift_string(BAHN_CREDENTIALS, "bahnWebhookSecret")

# Centra: the plugin (Session-mode) token that starts a shopper session, and the shared secret.
CENTRA_PLUGIN_TOKEN = swift_string(CENTRA_RULES, "pluginToken")
CENTRA_SHARED_SECRET = swift_string(CENTRA_RULES, "sharedSecret")
