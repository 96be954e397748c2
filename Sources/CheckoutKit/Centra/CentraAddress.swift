import Foundation

/// Addresses for Centra's `AddressInput`, from the file a user gives: an Apple Pay `PKContact` as JSON
/// (`name{givenName,familyName}`, `postalAddress{street,city,state,postalCode,isoCountryCode}`, `emailAddress`,
/// `phoneNumber`), mapped exactly as the integration guide's `mapPKContactToCentraAddress` (country upper-cased; see
/// docs/protocols/centra.md); or an
/// `AddressInput`-shaped object used as it is. Anything else, or no country, is exit 65 naming the field.
public enum CentraAddress {
    /// The contact a local run uses when none is given (a test shopper in Stockholm), as a PKContact.
    public static let testContact: JSON = [
        "name": ["givenName": "Ada", "familyName": "Lovelace"],
        "postalAddress": [
            "street": "Storgatan 1", "city": "Stockholm", "state": "", "postalCode": "11122", "isoCountryCode": "se",
        ],
        "emailAddress": "ada@example.com", "phoneNumber": "+46701234567",
    ]

    static let addressInputFields: Set<String> = [
        "address1", "address2", "attention", "cellPhoneNumber", "city", "companyName",
        "country", "email", "faxNumber", "firstName", "lastName", "phoneNumber", "state",
        "stateOrProvince", "vatNumber", "zipCode",
    ]

    public static func read(path: String, option: String) throws(Diagnostic) -> JSON.Object {
        let object = try FileIO.readJSONObject(
            path, what: "\(option) file",
            example: "a PKContact as JSON ({\"name\": {…}, \"postalAddress\": {…}}), or a Centra AddressInput object")
        return try address(.object(object), source: "\(option) file \(path)")
    }

    static func address(_ json: JSON, source: String) throws(Diagnostic) -> JSON.Object {
        guard case .object(let object) = json else {
            throw .data(
                "\(source) holds \(json.kindName), not an object",
                hint: "a PKContact as JSON, or a Centra AddressInput object")
        }
        if object["postalAddress"] != nil || object["name"] != nil { return try fromContact(object, source: source) }
        // AddressInput as it is: known fields only, strings only, a country.
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            guard addressInputFields.contains(key) else {
                let suggestion =
                    Suggest.closest(to: key, in: addressInputFields.sorted()).map { "; did you mean '\($0)'?" } ?? ""
                throw .data(
                    "\(source): $.\(key) is not an AddressInput field\(suggestion)",
                    hint:
                        "AddressInput fields: \(addressInputFields.sorted().joined(separator: ", ")); or give a PKContact"
                )
            }
            guard value.stringValue != nil else {
                throw .data("\(source): $.\(key): expected a string, found \(value.kindName)", hint: "quote the value")
            }
        }
        guard let country = object["country"]?.stringValue, !country.isEmpty else {
            throw .data("\(source): $.country is missing", hint: "add the ISO country code, e.g. \"country\": \"SE\"")
        }
        var out = object
        out["country"] = .string(country.uppercased())
        return out
    }

    /// The integration guide's `mapPKContactToCentraAddress`.
    static func fromContact(_ contact: JSON.Object, source: String) throws(Diagnostic) -> JSON.Object {
        func string(_ value: JSON?, _ path: String) throws(Diagnostic) -> String? {
            guard let value, value != .null else { return nil }
            guard let s = value.stringValue else {
                throw .data("\(source): \(path): expected a string, found \(value.kindName)", hint: "quote the value")
            }
            return s
        }
        let postal = contact["postalAddress"]
        if let postal, postal.objectValue == nil, postal != .null {
            throw .data(
                "\(source): $.postalAddress: expected an object, found \(postal.kindName)",
                hint: "{\"street\", \"city\", \"postalCode\", \"isoCountryCode\"}")
        }
        guard let country = try string(postal?["isoCountryCode"], "$.postalAddress.isoCountryCode"), !country.isEmpty
        else {
            throw .data(
                "\(source): $.postalAddress.isoCountryCode is missing",
                hint: "add the ISO country code, e.g. \"isoCountryCode\": \"se\"")
        }
        var out: JSON.Object = ["country": .string(country.uppercased())]
        out["firstName"] = try string(contact["name"]?["givenName"], "$.name.givenName").map(JSON.string)
        out["lastName"] = try string(contact["name"]?["familyName"], "$.name.familyName").map(JSON.string)
        out["address1"] = try string(postal?["street"], "$.postalAddress.street").map(JSON.string)
        out["city"] = try string(postal?["city"], "$.postalAddress.city").map(JSON.string)
        out["state"] = try string(postal?["state"], "$.postalAddress.state").map(JSON.string)
        out["zipCode"] = try string(postal?["postalCode"], "$.postalAddress.postalCode").map(JSON.string)
        out["email"] = try string(contact["emailAddress"], "$.emailAddress").map(JSON.string)
        out["phoneNumber"] = try string(contact["phoneNumber"], "$.phoneNumber").map(JSON.string)
        return out
    }

    /// What the sheet reveals before authorisation (the shipping-contact callback): country, city, state, zip, and
    /// `address1: ""`.
    static func partial(_ address: JSON.Object) -> JSON.Object {
        var out: JSON.Object = ["address1": ""]
        for key in ["country", "city", "state", "zipCode"] { out[key] = address[key] }
        return out
    }
}
