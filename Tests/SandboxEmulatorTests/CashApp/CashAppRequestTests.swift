import Foundation
import LoopbackHTTP
import Testing

@testable import SandboxEmulator

/// Cash App's Customer Request API and the sandbox customer, over real HTTP: Client auth, the request's shape and
/// checks, idempotency, the poll state machine (auto approval, scenario amounts, manual decisions, trigger rotation,
/// grant expiry), PATCH, the settings and the approve page.
@Suite struct CashAppRequestTests {
    @Test func clientAuthIsRequiredInCashAppsErrorShape() throws {
        try withCashApp { client in
            let refused: [[(String, String)]] = [
                [], [("Authorization", "Client CA-CI_AFTERPAY")], [("Authorization", "Bearer CAS-CI_AFTERPAY")],
            ]
            for headers in refused {
                let response = try client.cashApp(
                    "POST", "", CashAppTestClient.requestBody(cents: 5000), headers: headers)
                #expect(response.status == 401)
                #expect(response.cashAppError.category == "AUTHENTICATION_ERROR")
                #expect(response.cashAppError.code == "UNAUTHORIZED")
            }
            let poll = try client.cashApp("GET", "/GRR_unknown", headers: [])
            #expect(poll.status == 401)
        }
    }

    @Test func createAnswersAPendingRequestWithTriggers() throws {
        try withCashApp { client in
            var body = CashAppTestClient.requestBody(cents: 5000)
            var inner = body["request"] as! [String: Any]
            inner["reference_id"] = "order-42"
            inner["metadata"] = ["cart": "7"]
            body["request"] = inner
            let response = try client.cashApp("POST", "", body)
            #expect(response.status == 201)
            let request = response.request
            let id = try #require(request["id"] as? String)
            #expect(id.hasPrefix("GRR_"))
            #expect(request["status"] as? String == "PENDING")
            #expect(request["grants"] as? [Any] != nil && (request["grants"] as? [Any])?.isEmpty == true)
            #expect(request["customer_profile"] == nil)
            #expect(request["reference_id"] as? String == "order-42")
            #expect((request["metadata"] as? [String: String]) == ["cart": "7"])
            #expect(request["redirect_url"] as? String == "https://shop.example/confirm")
            let action = try #require((request["actions"] as? [[String: Any]])?.first)
            #expect(action["amount"] as? Int == 5000)
            #expect(action["scope_id"] as? String == TestCredentials.afterpayExternalBrandID)
            let triggers = try #require(request["auth_flow_triggers"] as? [String: Any])
            #expect(triggers["mobile_url"] as? String == client.emulator.baseURL + "/cashapp/approve/\(id)?v=1")
            for key in ["qr_code_image_url", "qr_code_svg_url", "desktop_url", "refreshes_at"] {
                #expect(triggers[key] is String)
            }
            for key in ["created_at", "updated_at", "expires_at"] {
                #expect((request[key] as? String)?.hasSuffix("Z") == true)
            }
        }
    }

    @Test func createChecksTheBody() throws {
        try withCashApp { client in
            let noRedirect = try client.cashApp("POST", "", CashAppTestClient.requestBody(cents: 5000, redirect: nil))
            #expect(noRedirect.status == 400)
            #expect(noRedirect.cashAppError.code == "MISSING_REQUIRED_PARAMETER")
            #expect(noRedirect.cashAppError.field == "request.redirect_url")

            let scope = try client.cashApp(
                "POST", "", CashAppTestClient.requestBody(cents: 5000, scope: "BRAND_someone_else"))
            #expect(scope.status == 400)
            #expect(scope.cashAppError.category == "INVALID_REQUEST_ERROR")
            #expect(scope.cashAppError.code == "INVALID_SCOPE_ID")
            #expect(scope.cashAppError.field == "request.actions[0].scope_id")
            // The merchant id is a scope too (the Android docs use it).
            let merchantScope = try client.cashApp(
                "POST", "",
                CashAppTestClient.requestBody(cents: 5000, scope: TestCredentials.afterpayExternalMerchantID))
            #expect(merchantScope.status == 201)

            for amount: Any in [50.5, 0, -100, "5000", true] {
                let response = try client.cashApp("POST", "", CashAppTestClient.requestBody(cents: amount))
                #expect(response.cashAppError.code == "INVALID_AMOUNT", "amount \(amount)")
                #expect(response.cashAppError.field == "request.actions[0].amount")
            }

            var noKey = CashAppTestClient.requestBody(cents: 5000)
            noKey["idempotency_key"] = nil
            let missingKey = try client.cashApp("POST", "", noKey)
            #expect(missingKey.status == 400)
            #expect(missingKey.cashAppError.code == "MISSING_REQUIRED_PARAMETER")
            #expect(missingKey.cashAppError.field == "idempotency_key")
        }
    }

    @Test func idempotencyKeyReplaysTheSameRequestAndRefusesAnotherBody() throws {
        try withCashApp { client in
            let key = UUID().uuidString
            let first = try client.cashApp("POST", "", CashAppTestClient.requestBody(cents: 5000, key: key))
            #expect(first.status == 201)
            let again = try client.cashApp("POST", "", CashAppTestClient.requestBody(cents: 5000, key: key))
            #expect(again.status == 200)
            #expect(again.request["id"] as? String == first.request["id"] as? String)
            let changed = try client.cashApp("POST", "", CashAppTestClient.requestBody(cents: 5001, key: key))
            #expect(changed.status == 400)
            #expect(changed.cashAppError.code == "IDEMPOTENCY_KEY_REUSED")
            // A new key is a new request.
            let other = try client.cashApp("POST", "", CashAppTestClient.requestBody(cents: 5000))
            #expect(other.status == 201)
            #expect(other.request["id"] as? String != first.request["id"] as? String)
        }
    }

    @Test func autoApprovalDecidesOnTheSecondPoll() throws {
        try withCashApp { client in
            let id = try #require(try client.createRequest(cents: 5000)["id"] as? String)
            #expect(try client.poll(id)["status"] as? String == "PENDING")
            let approved = try client.poll(id)
            #expect(approved["status"] as? String == "APPROVED")
            let profile = try #require(approved["customer_profile"] as? [String: Any])
            let customer = try #require(profile["id"] as? String)
            #expect(customer.hasPrefix("CST_"))
            #expect(profile["cashtag"] as? String == "$emulator")
            let grants = try #require(approved["grants"] as? [[String: Any]])
            #expect(grants.count == 1)
            #expect((grants[0]["id"] as? String)?.hasPrefix("GRG_") == true)
            #expect(grants[0]["customer_id"] as? String == customer)
            #expect(grants[0]["status"] as? String == "ACTIVE")
            #expect(grants[0]["type"] as? String == "ONE_TIME")
            #expect((grants[0]["action"] as? [String: Any])?["amount"] as? Int == 5000)
            #expect(grants[0]["expires_at"] is String)

            let unknown = try client.cashApp("GET", "/GRR_nothing")
            #expect(unknown.status == 404)
            #expect(unknown.cashAppError.code == "NOT_FOUND")
        }
    }

    @Test func scenarioAmountsDecideForTheCustomer() throws {
        try withCashApp { client in
            func afterTwoPolls(_ cents: Int) throws -> [String: Any] {
                let id = try #require(try client.createRequest(cents: cents)["id"] as? String)
                _ = try client.poll(id)
                return try client.poll(id)
            }
            let declined = try afterTwoPolls(1313)
            #expect(declined["status"] as? String == "DECLINED")
            #expect((declined["grants"] as? [Any])?.isEmpty == true)

            let grantless = try afterTwoPolls(1414)
            #expect(grantless["status"] as? String == "APPROVED")
            #expect((grantless["grants"] as? [Any])?.isEmpty == true)

            let undecided = try #require(try client.createRequest(cents: 1515)["id"] as? String)
            for _ in 0..<6 { #expect(try client.poll(undecided)["status"] as? String == "PENDING") }
        }
    }

    @Test func sandboxRoutesDecideByHandAndRefuseADecidedRequest() throws {
        try withCashApp { client in
            try client.setSettings(["approval": "manual"])
            let id = try #require(try client.createRequest(cents: 5000)["id"] as? String)
            for _ in 0..<3 { #expect(try client.poll(id)["status"] as? String == "PENDING") }
            let approved = try client.sandbox("POST", "/requests/\(id)/approve")
            #expect(approved.status == 200)
            #expect(approved.request["status"] as? String == "APPROVED")
            #expect((approved.request["grants"] as? [Any])?.count == 1)
            #expect(try client.poll(id)["status"] as? String == "APPROVED")

            let again = try client.sandbox("POST", "/requests/\(id)/decline")
            #expect(again.status == 409)
            #expect(again.cashAppError.category == "INVALID_REQUEST_ERROR")
            #expect(again.cashAppError.code == "INVALID_STATE_TRANSITION")

            let other = try #require(try client.createRequest(cents: 5000)["id"] as? String)
            let declined = try client.sandbox("POST", "/requests/\(other)/decline")
            #expect(declined.status == 200)
            #expect(declined.request["status"] as? String == "DECLINED")

            // Scenario amounts still apply to a manual approve; the undecided customer decides.
            let scenario1313 = try #require(try client.createRequest(cents: 1313)["id"] as? String)
            #expect(
                try client.sandbox("POST", "/requests/\(scenario1313)/approve").request["status"] as? String
                    == "DECLINED")
            let scenario1414 = try #require(try client.createRequest(cents: 1414)["id"] as? String)
            let grantless = try client.sandbox("POST", "/requests/\(scenario1414)/approve").request
            #expect(grantless["status"] as? String == "APPROVED")
            #expect((grantless["grants"] as? [Any])?.isEmpty == true)
            let scenario1515 = try #require(try client.createRequest(cents: 1515)["id"] as? String)
            #expect(
                try client.sandbox("POST", "/requests/\(scenario1515)/approve").request["status"] as? String
                    == "APPROVED")

            let unknown = try client.sandbox("POST", "/requests/GRR_nothing/approve")
            #expect(unknown.status == 404)
            #expect(unknown.cashAppError.code == "NOT_FOUND")
        }
    }

    @Test func theSandboxLookIsNotAPoll() throws {
        try withCashApp { client in
            let id = try #require(try client.createRequest(cents: 5000)["id"] as? String)
            _ = try client.poll(id)
            for _ in 0..<3 {
                let look = try client.sandbox("GET", "/requests/\(id)")
                #expect(look.status == 200)
                #expect(look.request["status"] as? String == "PENDING")
            }
            #expect(try client.poll(id)["status"] as? String == "APPROVED")
            #expect(try client.sandbox("GET", "/requests/GRR_nothing").cashAppError.code == "NOT_FOUND")
        }
    }

    @Test func triggersRotateOnceRefreshesAtHasPassed() throws {
        try withCashApp { client in
            try client.setSettings(["approval": "manual", "triggerLifetimeSeconds": 1])
            let id = try #require(try client.createRequest(cents: 5000)["id"] as? String)
            let first = try #require(try client.poll(id)["auth_flow_triggers"] as? [String: Any])
            #expect((first["mobile_url"] as? String)?.hasSuffix("?v=1") == true)
            Thread.sleep(forTimeInterval: 1.2)
            let second = try #require(try client.poll(id)["auth_flow_triggers"] as? [String: Any])
            #expect((second["mobile_url"] as? String)?.hasSuffix("?v=2") == true)
            #expect((second["qr_code_image_url"] as? String)?.hasSuffix("?v=2") == true)
            let before = try #require(first["refreshes_at"] as? String)
            let after = try #require(second["refreshes_at"] as? String)
            #expect(after > before)
            // Before the new refreshes_at, the triggers stay.
            let third = try #require(try client.poll(id)["auth_flow_triggers"] as? [String: Any])
            #expect(third["mobile_url"] as? String == second["mobile_url"] as? String)
        }
    }

    @Test func grantsExpireAfterTheirLifetime() throws {
        try withCashApp { client in
            try client.setSettings(["grantLifetimeSeconds": 1])
            let approved = try client.approvedRequest(cents: 5000)
            let id = try #require(approved.request["id"] as? String)
            Thread.sleep(forTimeInterval: 1.2)
            let grant = try #require((try client.poll(id)["grants"] as? [[String: Any]])?.first)
            #expect(grant["status"] as? String == "EXPIRED")
        }
    }

    @Test func patchChangesAPendingRequestOnly() throws {
        try withCashApp { client in
            try client.setSettings(["approval": "manual"])
            let id = try #require(try client.createRequest(cents: 5000)["id"] as? String)
            let actions = [
                [
                    "type": "ONE_TIME_PAYMENT", "scope_id": TestCredentials.afterpayExternalBrandID, "amount": 6000,
                    "currency": "USD",
                ]
            ]
            let patched = try client.cashApp(
                "PATCH", "/" + id, ["request": ["reference_id": "order-7", "actions": actions]])
            #expect(patched.status == 200)
            #expect(patched.request["reference_id"] as? String == "order-7")
            #expect(((patched.request["actions"] as? [[String: Any]])?.first)?["amount"] as? Int == 6000)

            let badScope = try client.cashApp(
                "PATCH", "/" + id,
                [
                    "request": [
                        "actions": [["type": "ONE_TIME_PAYMENT", "scope_id": "x", "amount": 1, "currency": "USD"]]
                    ]
                ])
            #expect(badScope.cashAppError.code == "INVALID_SCOPE_ID")

            _ = try client.sandbox("POST", "/requests/\(id)/decline")
            let late = try client.cashApp("PATCH", "/" + id, ["request": ["reference_id": "order-8"]])
            #expect(late.status == 400)
            #expect(late.cashAppError.code == "INVALID_STATE_TRANSITION")
        }
    }

    @Test func settingsTakeAnySubsetAndRefuseNonsense() throws {
        try withCashApp { client in
            let defaults = try client.sandbox("GET", "/settings")
            #expect(defaults.json["approval"] as? String == "auto")
            #expect(defaults.json["autoApproveAfterPolls"] as? Int == 2)
            #expect(defaults.json["triggerLifetimeSeconds"] as? Int == 30)
            #expect(defaults.json["grantLifetimeSeconds"] as? Int == 600)

            let changed = try client.sandbox("PUT", "/settings", ["autoApproveAfterPolls": 3])
            #expect(changed.status == 200)
            #expect(changed.json["autoApproveAfterPolls"] as? Int == 3)
            #expect(changed.json["approval"] as? String == "auto")
            let id = try #require(try client.createRequest(cents: 5000)["id"] as? String)
            _ = try client.poll(id)
            #expect(try client.poll(id)["status"] as? String == "PENDING")
            #expect(try client.poll(id)["status"] as? String == "APPROVED")

            for bad: [String: Any] in [
                ["approval": "sometimes"], ["grantLifetimeSeconds": 0], ["autoApproveAfterPolls": 1.5],
                ["approvel": "manual"],
            ] {
                let response = try client.sandbox("PUT", "/settings", bad)
                #expect(response.status == 400, "\(bad)")
            }
            #expect(try client.sandbox("GET", "/settings").json["autoApproveAfterPolls"] as? Int == 3)
        }
    }

    @Test func approvePageOffersApproveAndDecline() throws {
        try withCashApp { client in
            let request = try client.createRequest(cents: 5000)
            let id = try #require(request["id"] as? String)
            let mobile = try #require((request["auth_flow_triggers"] as? [String: Any])?["mobile_url"] as? String)
            let path = String(mobile.dropFirst(client.emulator.baseURL.count))
            let page = try rawRequest(port: client.port, method: "GET", path: path)
            #expect(page.status == 200)
            #expect(page.headers["Content-Type"]?.hasPrefix("text/html") == true)
            #expect(page.text.contains("action=\"/_sandbox/cashapp/requests/\(id)/approve\""))
            #expect(page.text.contains("action=\"/_sandbox/cashapp/requests/\(id)/decline\""))
            #expect(page.text.contains("$50.00"))
            let missing = try rawRequest(port: client.port, method: "GET", path: "/cashapp/approve/%3Cscript%3E")
            #expect(missing.status == 404)
            #expect(!missing.text.contains("<script>"))
        }
    }
}
