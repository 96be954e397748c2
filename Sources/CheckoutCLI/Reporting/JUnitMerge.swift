import CheckoutKit
import Foundation

/// `flow junit-merge OUT.xml IN.xml…`: the shards' JUnit files as one — every `<testsuite>` of every input, in the
/// order given, under one `<testsuites>` whose totals are summed from them. It reads the JUnit that `--junit` writes
/// (and any file whose testsuites are not nested): each `<testsuite …>…</testsuite>` element is kept byte for byte.
enum JUnitMerge {
    struct Suite {
        var xml: String
        var tests: Int
        var failures: Int
        var errors: Int
        var time: Double
    }

    /// The testsuite elements of one file, with the counts of their opening tags.
    static func suites(in text: String, file: String) throws(Diagnostic) -> [Suite] {
        func malformed(_ why: String) -> Diagnostic {
            .data("\(file) is not a JUnit report: \(why)", hint: "give the files --junit wrote")
        }
        guard text.contains("<testsuites") || text.contains("<testsuite") else {
            throw malformed("it has no <testsuites> or <testsuite> element")
        }
        var suites: [Suite] = []
        var rest = text[...]
        while let open = rest.range(of: "<testsuite") {
            let afterName = rest[open.upperBound...]
            // `<testsuites` is the wrapper, not a suite.
            if afterName.first == "s" {
                rest = afterName
                continue
            }
            guard let tagEnd = afterName.firstIndex(of: ">") else { throw malformed("a <testsuite> tag is not closed") }
            let tag = String(rest[open.lowerBound...tagEnd])
            let end: String.Index
            if tag.hasSuffix("/>") {
                end = rest.index(after: tagEnd)
            } else {
                guard let close = rest[tagEnd...].range(of: "</testsuite>") else {
                    throw malformed("a <testsuite> element is not closed")
                }
                end = close.upperBound
            }
            func number(_ name: String) -> Double {
                guard let start = tag.range(of: " \(name)=\"") else { return 0 }
                return Double(tag[start.upperBound...].prefix { $0 != "\"" }) ?? 0
            }
            suites.append(
                Suite(
                    xml: String(rest[open.lowerBound..<end]), tests: Int(number("tests")),
                    failures: Int(number("failures")),
                    errors: Int(number("errors")), time: number("time")))
            rest = rest[end...]
        }
        return suites
    }

    static func merge(_ inputs: [(file: String, text: String)]) throws(Diagnostic) -> String {
        var all: [Suite] = []
        for input in inputs { all += try suites(in: input.text, file: input.file) }
        let tests = all.reduce(0) { $0 + $1.tests }
        let failures = all.reduce(0) { $0 + $1.failures }
        let errors = all.reduce(0) { $0 + $1.errors }
        let time = all.reduce(0) { $0 + $1.time }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml +=
            "<testsuites name=\"checkout-driver\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"\(errors)\" time=\"\(String(format: "%.3f", time))\">\n"
        for suite in all { xml += "  " + suite.xml + "\n" }
        xml += "</testsuites>\n"
        return xml
    }
}
