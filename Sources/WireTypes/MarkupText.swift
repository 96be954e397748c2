extension String {
    /// Text safe inside XML or HTML element content and attribute values: the HTML report's pages and the JUnit
    /// report alike. `&#39;` rather than `&apos;`, which HTML 4 lacks; a C0 control character other than tab, line feed
    /// and carriage return, which XML 1.0 does not allow even as a reference, becomes "?".
    public var markupEscaped: String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case _ where scalar.value < 0x20 && scalar != "\n" && scalar != "\t" && scalar != "\r": out += "?"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
