"""Tavern `$ext` functions for the Bahn and Centra flows: what cannot be written as plain YAML.

Bahn (docs/protocols/bahn.md): a fresh `Bn-Request-Id` UUID per HTTP attempt; POST bodies as compact JWS
(RFC 7515, ES256 with the 64-byte R||S signature, protected header {"alg","kid"}) over the JSON request, signed
with the registered client key; the confirm body carrying a freshly made Apple Pay token as a JSON string; the
poll's pause between attempts; the wait for the signed webhook.
Centra (docs/protocols/centra.md): money read as exact decimals (never a float times 100), the widget's line
items, and the final paymentInstructions variables carrying base64 of a fresh token's exact bytes.

Run as a script it prints what Scripts/bench needs to drive Bahn with curl and wrk: `create-body` (a signed
create-intent JWS) and `api-key`.
"""

import base64
import json
import os
import sys
import time
import uuid
from decimal import Decimal

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

import apple_pay
import emulator_credentials as creds
import webhook_inbox

_SIGNING_KEY = serialization.load_pem_private_key(creds.BAHN_SIGNING_KEY_PEM.encode(), password=None)
_JWS_HEADER = json.dumps({"alg": "ES256", "kid": creds.BAHN_KEY_ID}, separators=(",", ":")).encode()

# Statuses that end a poll (BahnProtocol.terminalStatuses), and how long the flow waits between polls.
TERMINAL_STATUSES = {"succeeded", "requires_capture", "canceled", "requires_payment_method"}
POLL_INTERVAL = 0.25


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jws(payload: dict) -> str:
    """Compact JWS of the JSON payload: ES256, the signature as R||S (32 bytes each), not DER."""
    signing_input = _b64url(_JWS_HEADER) + "." + _b64url(json.dumps(payload, separators=(",", ":")).encode())
    r, s = decode_dss_signature(_SIGNING_KEY.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def runs():
    """The parametrisation that repeats a flow: TAVERN_RUNS instances (default 100), each a test of its own."""
    return list(range(int(os.environ.get("TAVERN_RUNS", "100"))))


# --- Bahn ------------------------------------------------------------------------------------------------------

def request_id():
    """Merged into a request's headers: a new UUID on every HTTP attempt, retries included."""
    return {"Bn-Request-Id": str(uuid.uuid4())}


def create_intent_body(amount, currency, order_id):
    """The create body: amount in minor units, the numeric currency, the order id as description and metadata."""
    return jws({"amount": int(amount), "currency": str(currency), "description": f"Order #{order_id}",
                "metadata": {"order_id": str(order_id)}})


def confirm_body(amount, currency):
    """Plays the phone (makes a single-use token for the amount) and the backend (sends its exact bytes as a
    JSON string, neither re-serialised nor base64-wrapped)."""
    token = apple_pay.make_token(int(amount), str(currency))
    return jws({"payment_method_data": {"apple_pay": {"token": token.decode()}}})


def _status(response) -> str | None:
    return (response.json().get("payment_intent") or {}).get("status")


def pause_while_pending(response):
    """The poll's `until`: a status that is not final yet fails the attempt after the poll interval, so Tavern's
    max_retries asks again; a final status passes at once (Tavern's delay_after would also sleep after the
    successful attempt, which the driver's poll does not)."""
    status = _status(response)
    if status not in TERMINAL_STATUSES:
        time.sleep(POLL_INTERVAL)
        raise AssertionError(f"payment intent still {status}")


def await_webhook(response, event_type, timeout):
    """`bahn.awaitWebhook`: the signed event of that type for this intent, delivered to this process's inbox."""
    if _status(response) not in TERMINAL_STATUSES:
        return  # the poll is being retried; wait once it has settled
    intent = response.json()["payment_intent"]["id"]
    if webhook_inbox.inbox().wait(event_type, intent, float(timeout)) is None:
        raise AssertionError(f"no {event_type} webhook for {intent} within {timeout} s")


# --- Centra ----------------------------------------------------------------------------------------------------

def _exact(response):
    """The answer with every number as a Decimal, so money keeps the digits Centra wrote."""
    return json.loads(response.text, parse_float=Decimal, parse_int=Decimal)


def _minor(money) -> int:
    """MonetaryValue -> minor units, from its decimal digits against the currency's denominator."""
    minor = money["value"] * money["currency"]["denominator"]
    if minor != minor.to_integral_value():
        raise AssertionError(f"{money['value']} has more decimals than the denominator {money['currency']['denominator']} allows")
    return int(minor)


def _decimal_string(money) -> str:
    """Minor units as the decimal string the widget wants ("799.00")."""
    denominator = int(money["currency"]["denominator"])
    places = len(str(denominator)) - 1
    return f"{Decimal(_minor(money)) / denominator:.{places}f}"


def _grand_total(selection):
    """What the shopper pays: the checkout's GRAND_TOTAL row, else grandTotal."""
    for row in (selection.get("checkout") or {}).get("totals") or []:
        if row.get("type") == "GRAND_TOTAL":
            return row["price"]
    return selection["grandTotal"]


def no_graphql_errors(response, field):
    """What the driver's client checks on every answer: no top-level errors, and no userErrors on the payload."""
    body = response.json()
    if body.get("errors"):
        raise AssertionError(f"{field}: {body['errors']}")
    payload = (body.get("data") or {}).get(field)
    if isinstance(payload, dict) and payload.get("userErrors"):
        raise AssertionError(f"{field}: {payload['userErrors']}")


def save_widget_request(response):
    """From the first selection read: what the sheet would show (total in minor units, lines with decimal prices)."""
    selection = _exact(response)["data"]["selection"]
    items = [{"name": line["name"], "price": _decimal_string(line["lineValue"])} for line in selection["lines"]]
    return {"widget_amount": _minor(_grand_total(selection)), "line_items": items}


def check_apple_pay_offered(response):
    """The express_checkout_adyen widget has no error, and its contents (a JSON string) offers Apple Pay."""
    widgets = [w for entry in response.json()["data"]["expressCheckoutWidgets"]["list"] for w in entry["widgets"]]
    widget = next(w for w in widgets if w["name"] == "express_checkout_adyen")
    if widget.get("error"):
        raise AssertionError(f"the Adyen widget reports an error: {widget['error']}")
    config = json.loads(widget["contents"])
    methods = config.get("paymentMethodsResponse", {}).get("paymentMethods", [])
    if not any(m.get("type") == "applepay" for m in methods):
        raise AssertionError("the Adyen config offers no Apple Pay")


def save_first_shipping_method(response):
    """The shipping method to set when none is given: the first one offered."""
    methods = response.json()["data"]["selection"]["checkout"]["shippingMethods"]
    return {"shipping_method": methods[0]["id"]}


def save_payment_amount(response):
    """After setShippingMethod: the amount and numeric currency the token must carry."""
    total = _grand_total(_exact(response)["data"]["setShippingMethod"]["selection"])
    return {"pay_amount": _minor(total), "pay_currency": str(total["currency"]["isoNumber"])}


def final_payment(amount, currency):
    """Merged into the final paymentInstructions body (whose address and terms are in the YAML): both pages on this
    process's loopback listener, and Adyen's Apple Pay state data with base64 of a fresh token's exact bytes."""
    token = apple_pay.make_token(int(amount), str(currency))
    pages = webhook_inbox.inbox().base_url
    return {"variables": {"input": {
        "paymentFailedPage": f"{pages}/failed",
        "paymentMethodSpecificFields": {"express": True, "paymentMethod": {
            "applePayToken": base64.b64encode(token).decode(), "type": "applepay"}},
        "paymentReturnPage": f"{pages}/return",
    }}}


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "create-body":
        print(create_intent_body(8000, "704", sys.argv[2] if len(sys.argv) > 2 else "bench"))
    elif what == "api-key":
        print(creds.BAHN_API_KEY)
    else:
        sys.exit("usage: checkout_ext.py create-body [ORDER_ID] | api-key")


ORDER_POLL_INTERVAL = 0.1  # emulator-orders' await-paid: "interval": "100ms"


def pause_until_paid(response):
    """emulator-orders' `until`: an order not paid yet fails the attempt after the interval, so max_retries asks again."""
    status = (response.json().get("order") or {}).get("status")
    if status != "paid":
        time.sleep(ORDER_POLL_INTERVAL)
        raise AssertionError(f"order still {status}")


def has_a_ledger_entry(response):
    """emulator-orders' `expect: {exists: [entries[0].id]}`."""
    entries = response.json().get("entries") or []
    assert entries and entries[0].get("id"), "the ledger has no entry"
