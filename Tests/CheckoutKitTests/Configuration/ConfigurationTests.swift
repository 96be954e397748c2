import Foundation
import TestSupport
import Testing

@testable import CheckoutKit

@Suite struct ConfigurationTests {
    func withDirectory<T>(_ body: (String) throws -> T) throws -> T {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        return try body(dir)
    }

    func write(_ text: String, to path: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) }

    @Test func precedence() throws {
        try withDirectory { dir in
            try write(
                #"{"profiles":{"dev":{"environment":"local","variables":{"BAHN_API_URL":"http://profile","BAHN_API_KEY":"profile-key","CENTRA_TOKEN":"profile-token","CASHAPP_CLIENT_ID":"profile-client"}}}}"#,
                to: dir + "/config.json")
            try write("BAHN_API_KEY=dotenv-key\nCENTRA_TOKEN=dotenv-token\n", to: dir + "/.env")
            let loader = ConfigurationLoader(
                processEnvironment: ["CENTRA_TOKEN": "process-token", "BAHN_API_KEY": "process-key"],
                workingDirectory: dir)
            let config = try loader.load(
                environmentFlag: "dev", configPath: dir + "/config.json",
                emulatorValues: { _ in ["BAHN_API_KEY": "emulator-key"] })
            #expect(config.kind == .local)
            #expect(config.value("AFTERPAY_API_URL") == "https://global-api-sandbox.afterpay.com")
            #expect(config.source(of: "AFTERPAY_API_URL") == "default")
            #expect(config.value("CASHAPP_CLIENT_ID") == "profile-client")
            #expect(config.value("BAHN_API_URL") == "http://profile")
            #expect(config.source(of: "BAHN_API_URL") == "profile dev")
            #expect(config.value("CENTRA_TOKEN") == "process-token")
            #expect(config.source(of: "CENTRA_TOKEN") == "environment")
            #expect(config.value("BAHN_API_KEY") == "emulator-key")
            #expect(config.source(of: "BAHN_API_KEY") == "emulator")
        }
    }

    @Test func dotEnvBeatsProfileAndEmulatorValuesOnlyApplyLocally() throws {
        try withDirectory { dir in
            try write(
                #"{"default":"stage","profiles":{"stage":{"variables":{"BAHN_API_KEY":"profile-key"}}}}"#,
                to: dir + "/c.json")
            try write("BAHN_API_KEY=dotenv-key\n", to: dir + "/.env")
            let loader = ConfigurationLoader(processEnvironment: [:], workingDirectory: dir)
            let config = try loader.load(
                environmentFlag: nil, configPath: dir + "/c.json",
                emulatorValues: { _ in ["BAHN_API_KEY": "emulator-key"] })
            #expect(config.environment == "stage")
            #expect(config.kind == .sandbox)
            #expect(config.value("BAHN_API_KEY") == "dotenv-key")
            #expect(config.source(of: "BAHN_API_KEY") == ".env")
        }
    }

    /// `--env-file PATH` is read after `./.env`: its values win over it, the process environment still wins over both,
    /// and it can choose the environment as `.env` can.
    @Test func anEnvFileBeatsDotEnvAndNamesItselfAsTheSource() throws {
        try withDirectory { dir in
            try write("BAHN_API_KEY=dotenv-key\nCENTRA_TOKEN=dotenv-token\n", to: dir + "/.env")
            try write(
                "BAHN_API_KEY=file-key\nCHECKOUT_DRIVER_ENV=sandbox\nBAHN_WEBHOOK_SECRET=file-secret\n",
                to: dir + "/staging.env")
            let loader = ConfigurationLoader(
                processEnvironment: ["BAHN_WEBHOOK_SECRET": "process-secret"], workingDirectory: dir)
            let config = try loader.load(environmentFlag: nil, configPath: nil, envFile: dir + "/staging.env")
            #expect(config.environment == "sandbox")
            #expect(config.value("BAHN_API_KEY") == "file-key")
            #expect(config.source(of: "BAHN_API_KEY") == "--env-file \(dir)/staging.env")
            #expect(config.value("CENTRA_TOKEN") == "dotenv-token" && config.source(of: "CENTRA_TOKEN") == ".env")
            #expect(config.value("BAHN_WEBHOOK_SECRET") == "process-secret")
        }
    }

    @Test func aMissingEnvFileIsADataErrorNamingIt() throws {
        try withDirectory { dir in
            let d = diagnostic { () throws(Diagnostic) in
                try ConfigurationLoader(processEnvironment: [:], workingDirectory: dir).load(
                    environmentFlag: nil, configPath: nil, envFile: dir + "/missing.env")
            }
            #expect(d?.code == .dataError)
            #expect(d?.message == "--env-file \(dir)/missing.env: no such file", "\(d?.message ?? "")")
        }
    }

    @Test func everyMissingVariableIsNamedAtOnce() throws {
        let config = Configuration(
            environment: "sandbox", kind: .sandbox, values: ["BAHN_API_URL": "https://x.example"])
        let d = diagnostic { () throws(Diagnostic) in
            try config.require(["BAHN_API_URL", "BAHN_API_KEY", "BAHN_SIGNING_KEY"], for: "Bahn requests")
        }
        #expect(d?.code == .configuration)
        #expect(
            d?.message.contains(
                "BAHN_API_KEY, BAHN_SIGNING_KEY are not set for environment 'sandbox' (needed by Bahn requests)")
                == true, "\(d?.message ?? "")")
    }

    @Test func unknownEnvironmentIsAConfigurationErrorWithDidYouMean() throws {
        try withDirectory { dir in
            let loader = ConfigurationLoader(processEnvironment: [:], workingDirectory: dir)
            let d = diagnostic { () throws(Diagnostic) in try loader.load(environmentFlag: "sandbx", configPath: nil) }
            #expect(d?.code == .configuration)
            #expect(d?.message.contains("did you mean 'sandbox'?") == true)
            #expect(d?.message.contains("the known ones are local, sandbox") == true)
        }
    }

    @Test func dotEnvParsing() throws {
        let values = try DotEnv.parse(
            """
            # a comment
            export A=1
            B = "two words"
            C='single # not a comment'
            D=plain # trailing comment
            E="line\\nbreak"

            F=
            """, source: ".env")
        #expect(
            values == [
                "A": "1", "B": "two words", "C": "single # not a comment", "D": "plain", "E": "line\nbreak", "F": "",
            ])
    }

    @Test func dotEnvQuotedValueWithTrailingComment() throws {
        let values = try DotEnv.parse("KEY=\"quoted value\" # note\nOTHER='x' # note", source: ".env")
        #expect(values["KEY"] == "quoted value")
        #expect(values["OTHER"] == "x")
    }

    @Test func dotEnvWithWindowsLineEndings() throws {
        let values = try DotEnv.parse("A=1\r\nB=\"two\"\r\n# c\r\nC=3\r\n", source: ".env")
        #expect(values == ["A": "1", "B": "two", "C": "3"])
        let d = diagnostic { () throws(Diagnostic) in try DotEnv.parse("A=1\r\noops\r\n", source: ".env") }
        #expect(d?.message.contains(".env:2:") == true)
    }

    @Test func malformedDotEnvLineNamesFileAndLine() throws {
        try withDirectory { dir in
            try write("A=1\n\nthis is not a pair\n", to: dir + "/.env")
            let loader = ConfigurationLoader(processEnvironment: [:], workingDirectory: dir)
            let d = diagnostic { () throws(Diagnostic) in try loader.load(environmentFlag: "local", configPath: nil) }
            #expect(d?.code == .dataError)
            #expect(d?.message.contains("\(dir)/.env:3:") == true)
        }
        let badKey = diagnostic { () throws(Diagnostic) in try DotEnv.parse("BAD-KEY=1", source: "x.env") }
        #expect(badKey?.code == .dataError)
        #expect(badKey?.message.contains("x.env:1:") == true)
    }

    @Test func configFileErrors() throws {
        try withDirectory { dir in
            try write("{ not json", to: dir + "/bad.json")
            let loader = ConfigurationLoader(processEnvironment: [:], workingDirectory: dir)
            let bad = diagnostic { () throws(Diagnostic) in
                try loader.load(environmentFlag: nil, configPath: dir + "/bad.json")
            }
            #expect(bad?.code == .dataError)
            #expect(bad?.message.contains("bad.json") == true)
            let missing = diagnostic { () throws(Diagnostic) in
                try loader.load(environmentFlag: nil, configPath: dir + "/none.json")
            }
            #expect(missing?.code == .configuration)
            #expect(missing?.message.contains("none.json") == true)
            try write(#"{"profiles":{"p":{"environment":"prod"}}}"#, to: dir + "/kind.json")
            let kind = diagnostic { () throws(Diagnostic) in
                try loader.load(environmentFlag: "p", configPath: dir + "/kind.json")
            }
            #expect(kind?.code == .dataError)
            #expect(kind?.message.contains("$.profiles.p.environment") == true)
            // The default path may be absent: that is no error.
            let quiet = ConfigurationLoader(
                processEnvironment: ["XDG_CONFIG_HOME": dir + "/nothing-here"], workingDirectory: dir)
            #expect(try quiet.load(environmentFlag: nil, configPath: nil).environment == "local")
        }
    }

    @Test func missingVariableIsAConfigurationError() {
        let config = Configuration(environment: "sandbox", kind: .sandbox, values: ["BAHN_API_KEY": ""])
        let d = config.missing("CENTRA_TOKEN", neededBy: "centra selection")
        #expect(d.code == .configuration)
        #expect(d.message.contains("CENTRA_TOKEN"))
        #expect(d.message.contains("sandbox"))
        let required = diagnostic { () throws(Diagnostic) in try config.require(["BAHN_API_KEY"], for: "bahn") }
        #expect(required?.code == .configuration)
        #expect(required?.message.contains("BAHN_API_KEY") == true)
    }

    @Test func secretValuesExcludeURLs() {
        let config = Configuration(
            environment: "sandbox", kind: .sandbox,
            values: [
                "BAHN_API_URL": "https://bn.example", "BAHN_API_KEY": "bn-key-123456", "CHECKOUT_DRIVER_ENV": "sandbox",
                "MY_HOOK": "http://127.0.0.1:9", "MY_TOKEN": "custom-secret-1",
            ])
        let secrets = Set(config.secretValues)
        #expect(secrets == ["bn-key-123456", "custom-secret-1"])
    }

    /// Every mistake in the config file is exit 65 naming the file and the JSON path, never silently ignored.
    @Test(arguments: [
        (#"{"profiles": []}"#, "$.profiles: expected an object of named profiles, found an array"),
        (
            #"{"profiles": {"ci": {"variables": ["A=1"]}}}"#,
            "$.profiles.ci.variables: expected an object of NAME: value, found an array"
        ),
        (
            #"{"profiles": {"ci": {"variables": {"A": 1}}}}"#,
            "$.profiles.ci.variables.A: expected a string, found a number"
        ),
        (
            #"{"profiles": {"ci": {"enviroment": "sandbox"}}}"#,
            "$.profiles.ci.enviroment: unknown key; did you mean 'environment'?"
        ),
        (#"{"profiles": {"ci": "sandbox"}}"#, "$.profiles.ci: expected an object, found a string"),
        (#"{"profiles": {"local": {}}}"#, "$.profiles.local: 'local' is a built-in environment, not a profile name"),
        (
            #"{"profiles": {"sandbox": {"environment": "sandbox"}}}"#,
            "$.profiles.sandbox: 'sandbox' is a built-in environment, not a profile name"
        ),
        (
            #"{"profiles": {"ci": {"environment": 1}}}"#,
            "$.profiles.ci.environment: expected \"local\" or \"sandbox\", found a number"
        ),
    ])
    func aConfigFileMistakeIs65AtItsPath(content: String, message: String) throws {
        try withDirectory { dir in
            try write(content, to: dir + "/config.json")
            let loader = ConfigurationLoader(processEnvironment: [:], workingDirectory: dir)
            let d = diagnostic { () throws(Diagnostic) in
                try loader.load(environmentFlag: "local", configPath: dir + "/config.json")
            }
            #expect(d?.code == .dataError, "\(String(describing: d))")
            #expect(d?.message == "\(dir)/config.json: \(message)", "\(String(describing: d))")
            #expect(d?.hint != nil)
        }
    }

    @Test(arguments: [
        ("KEY=\"open\n", ".env:1: the value of KEY opens a double quote that is never closed"),
        ("A=1\nKEY='open\n", ".env:2: the value of KEY opens a single quote that is never closed"),
        ("KEY=\"a\" b\n", ".env:1: text after the quoted value of KEY"),
        ("KEY=\"\n", ".env:1: the value of KEY opens a double quote that is never closed"),
    ])
    func aDotEnvQuoteMistakeIs65AtItsLine(content: String, message: String) throws {
        try withDirectory { dir in
            try write(content, to: dir + "/.env")
            let loader = ConfigurationLoader(processEnvironment: [:], workingDirectory: dir)
            let d = diagnostic { () throws(Diagnostic) in try loader.load(environmentFlag: "local", configPath: nil) }
            #expect(d?.code == .dataError, "\(String(describing: d))")
            #expect(d?.message == dir + "/" + message, "\(String(describing: d))")
        }
    }
}

/// The README's configuration table is the list the driver knows (`Configuration.variables`, each provider's declared
/// in its folder): every variable is in the table with its default, and the table names no other.
@Suite struct ConfigurationTableTests {
    @Test func theReadmeTableListsEveryVariableWithItsDefault() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = try #require(
            text.components(separatedBy: "\n## Configuration\n").dropFirst().first?.components(separatedBy: "\n#").first
        )
        var table: [String: String] = [:]
        for row in section.split(separator: "\n") where row.hasPrefix("| `") {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            for name in cells[0].split(separator: ",") {
                table[name.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")] = cells[2]
            }
        }
        #expect(table.count >= 20, "\(table.keys.sorted())")
        for variable in Configuration.variables {
            let row = table[variable.name]
            #expect(row != nil, "\(variable.name) is missing from the README's configuration table")
            if let value = variable.defaultValue {
                #expect(
                    row?.contains("`\(value)`") == true, "\(variable.name): the README's default is \(row ?? "nothing")"
                )
            }
        }
        for name in table.keys {
            #expect(
                Configuration.variables.contains { $0.name == name },
                "the README lists \(name), which the driver does not know")
        }
    }
}
