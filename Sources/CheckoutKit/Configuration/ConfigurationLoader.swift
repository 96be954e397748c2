import Foundation

/// Builds a `Configuration` from the config file, `.env` (and `--env-file`), the process environment and flags.
public struct ConfigurationLoader: Sendable {
    public var processEnvironment: [String: String]
    public var workingDirectory: String

    public init(
        processEnvironment: [String: String] = ProcessInfo.processInfo.environment,
        workingDirectory: String = FileManager.default.currentDirectoryPath
    ) {
        self.processEnvironment = processEnvironment
        self.workingDirectory = workingDirectory
    }

    /// `$XDG_CONFIG_HOME/checkout-driver/config.json`.
    public var defaultConfigPath: String {
        let base =
            processEnvironment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (home + "/.config")
        return base + "/checkout-driver/config.json"
    }

    var home: String { processEnvironment["HOME"] ?? NSHomeDirectory() }

    /// - Parameters:
    ///   - environmentFlag: `--env`, when given.
    ///   - configPath: `--config`, when given (then the file must exist).
    ///   - envFile: `--env-file PATH`, when given: a `.env` file read after `./.env`, so that its values win (then
    ///     the file must exist).
    ///   - flagValues: `--set NAME=VALUE` from the command line: above everything else.
    ///   - emulatorValues: for `local`, the embedded emulator's endpoints and credentials.
    public func load(
        environmentFlag: String?, configPath: String?, envFile: String? = nil, flagValues: [String: String] = [:],
        emulatorValues: (String) -> [String: String] = { _ in [:] }
    ) throws(Diagnostic) -> Configuration {
        var dotEnv = try DotEnv.load(path: workingDirectory + "/.env").mapValues { (value: $0, source: ".env") }
        if let envFile {
            guard FileManager.default.fileExists(atPath: envFile) else {
                throw .data(
                    "--env-file \(envFile): no such file",
                    hint: "give the path of a file of KEY=value lines, as .env holds")
            }
            for (k, v) in try DotEnv.load(path: envFile) { dotEnv[k] = (v, "--env-file \(envFile)") }
        }
        let file = try ConfigFile.load(path: configPath ?? defaultConfigPath, explicit: configPath != nil)
        let name =
            environmentFlag ?? processEnvironment["CHECKOUT_DRIVER_ENV"].flatMap { $0.isEmpty ? nil : $0 }
            ?? dotEnv["CHECKOUT_DRIVER_ENV"]?.value ?? file.defaultProfile ?? "local"

        let kind: Configuration.Kind
        var profileValues: [String: String] = [:]
        if let k = Configuration.Kind(rawValue: name), file.profiles[name] == nil {
            kind = k
        } else if let profile = file.profiles[name] {
            kind = profile.kind
            profileValues = profile.variables
        } else {
            let choices = ["local", "sandbox"] + file.profiles.keys.sorted()
            let suggestion = Suggest.closest(to: name, in: choices).map { "; did you mean '\($0)'?" } ?? ""
            throw .configuration(
                "unknown environment '\(name)'\(suggestion): the known ones are \(choices.joined(separator: ", "))",
                hint: "use local, sandbox, or a profile of \(configPath ?? defaultConfigPath)")
        }

        var config = Configuration(environment: name, kind: kind, values: [:])
        for v in Configuration.variables { if let d = v.defaultValue { config.set(v.name, d, source: "default") } }
        for (k, v) in profileValues { config.set(k, v, source: "profile \(name)") }
        for (k, v) in dotEnv { config.set(k, v.value, source: v.source) }
        let known = Set(Configuration.variables.map(\.name))
        for (k, v) in processEnvironment where known.contains(k) { config.set(k, v, source: "environment") }
        if kind == .local {
            // The embedded emulator is authoritative for local runs: its endpoints and test credentials
            // replace whatever the shell exports for the real sandboxes.
            for (k, v) in emulatorValues(name) { config.set(k, v, source: "emulator") }
        }
        for (k, v) in flagValues { config.set(k, v, source: "--set") }
        // Base URLs are checked once, here, where they enter: a file:// URL or a bare host never reaches libcurl.
        for variable in Configuration.variables where variable.name.hasSuffix("_URL") {
            if let value = config.value(variable.name), let problem = HTTPURL.problem(value) {
                throw .configuration(
                    "\(variable.name) '\(value)' (from \(config.source(of: variable.name) ?? "configuration")) \(problem)",
                    hint: "set \(variable.name) to the service's base URL, e.g. https://host/path")
            }
        }
        return config
    }
}

/// `.env` in the working directory: `KEY=value` lines, `export` prefixes, quotes and comments.
enum DotEnv {
    static func load(path: String) throws(Diagnostic) -> [String: String] {
        guard FileManager.default.fileExists(atPath: path) else { return [:] }
        guard let data = try? FileIO.read(path).get(), let text = String(data: data, encoding: .utf8) else {
            throw .data("\(path): cannot read it as UTF-8 text", hint: "a .env file holds KEY=value lines")
        }
        return try parse(text, source: path)
    }

    static func parse(_ text: String, source: String) throws(Diagnostic) -> [String: String] {
        var out: [String: String] = [:]
        // `\.isNewline`, not "\n": Swift reads "\r\n" as one Character, so a file with Windows line endings
        // would otherwise be one long line.
        for (number, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            var line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasSuffix("\r") { line.removeLast() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = String(line.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
            guard let eq = line.firstIndex(of: "=") else {
                throw .data(
                    "\(source):\(number + 1): expected KEY=value, found '\(line.prefix(40))'",
                    hint: "fix or remove that line; comments start with #")
            }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw .data(
                    "\(source):\(number + 1): '\(key)' is not a variable name",
                    hint: "names are letters, digits and _, as in BAHN_API_KEY=…")
            }
            var value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            // A quoted value may be followed by a comment: `KEY="value" # note`.
            if let q = value.first, q == "\"" || q == "'" {
                guard value.count >= 2, let close = value.lastIndex(of: q), close > value.startIndex else {
                    throw .data(
                        "\(source):\(number + 1): the value of \(key) opens a \(q == "\"" ? "double" : "single") quote that is never closed",
                        hint:
                            "close the quote on the same line (a value is one line; write \\n for a line break inside double quotes)"
                    )
                }
                guard
                    value[value.index(after: close)...].trimmingCharacters(in: .whitespaces).first.map({ $0 == "#" })
                        ?? true
                else {
                    throw .data(
                        "\(source):\(number + 1): text after the quoted value of \(key)",
                        hint: "put a comment after it as # note, or quote the whole value")
                }
                value = String(value[value.index(after: value.startIndex)..<close])
                if q == "\"" { value = value.replacingOccurrences(of: "\\n", with: "\n") }
            } else if let hash = value.range(of: " #") {
                value = value[..<hash.lowerBound].trimmingCharacters(in: .whitespaces)
            }
            out[key] = value
        }
        return out
    }
}

/// The JSON config file with named profiles:
/// `{"default": "staging", "profiles": {"staging": {"environment": "sandbox", "variables": {"BAHN_API_URL": "…"}}}}`.
struct ConfigFile {
    struct Profile {
        var kind: Configuration.Kind
        var variables: [String: String]
    }

    var defaultProfile: String?
    var profiles: [String: Profile] = [:]

    static func load(path: String, explicit: Bool) throws(Diagnostic) -> ConfigFile {
        guard let data = try? FileIO.read(path).get() else {
            if explicit {
                throw .configuration(
                    "config file \(path) does not exist", hint: "check --config, or drop it to use \(path)")
            }
            return ConfigFile()
        }
        let json: JSON
        do { json = try JSON.parse(data) } catch {
            throw .data("\(path): not valid JSON: \(error)", hint: "see docs/configuration.md for the file's shape")
        }
        guard case .object(let root) = json else {
            throw .data(
                "\(path): $: expected an object, found \(json.kindName)",
                hint: "see docs/configuration.md for the file's shape")
        }
        var file = ConfigFile()
        for key in root.keys where !["default", "profiles", "$schema"].contains(key) {
            throw .data("\(path): $.\(key): unknown key", hint: "the file has \"default\" and \"profiles\"")
        }
        if let d = root["default"] {
            guard let s = d.stringValue else {
                throw .data(
                    "\(path): $.default: expected a profile name, found \(d.kindName)",
                    hint: "\"default\": \"staging\" names one of the profiles")
            }
            file.defaultProfile = s
        }
        let shape = "a profile is {\"environment\": \"sandbox\", \"variables\": {\"NAME\": \"value\"}}"
        var profiles: JSON.Object = [:]
        if let p = root["profiles"] {
            guard case .object(let o) = p else {
                throw .data(
                    "\(path): $.profiles: expected an object of named profiles, found \(p.kindName)", hint: shape)
            }
            profiles = o
        }
        for (name, value) in profiles.sorted(by: { $0.key < $1.key }) {
            let at = "\(path): \(JSONPath(components: [.key("profiles"), .key(name)]))"
            if Configuration.Kind(rawValue: name) != nil {
                throw .data(
                    "\(at): '\(name)' is a built-in environment, not a profile name",
                    hint: "name the profile something else (staging, ci, …); --env \(name) needs no profile")
            }
            guard case .object(let p) = value else {
                throw .data("\(at): expected an object, found \(value.kindName)", hint: shape)
            }
            for key in p.keys.sorted() where !["environment", "variables", "description"].contains(key) {
                let suggestion =
                    Suggest.closest(to: key, in: ["environment", "variables", "description"]).map {
                        "; did you mean '\($0)'?"
                    } ?? ""
                throw .data("\(at).\(key): unknown key\(suggestion)", hint: shape)
            }
            var kindName = "sandbox"
            if let e = p["environment"] {
                guard let text = e.stringValue else {
                    throw .data(
                        "\(at).environment: expected \"local\" or \"sandbox\", found \(e.kindName)", hint: shape)
                }
                kindName = text
            }
            guard let kind = Configuration.Kind(rawValue: kindName) else {
                throw .data("\(at).environment: expected \"local\" or \"sandbox\", found \"\(kindName)\"", hint: shape)
            }
            var vars: [String: String] = [:]
            if let v = p["variables"] {
                guard case .object(let o) = v else {
                    throw .data("\(at).variables: expected an object of NAME: value, found \(v.kindName)", hint: shape)
                }
                for (k, value) in o {
                    guard let s = value.stringValue else {
                        throw .data(
                            "\(at).variables.\(k): expected a string, found \(value.kindName)",
                            hint: "quote the value: \"\(k)\": \"…\"")
                    }
                    vars[k] = s
                }
            }
            file.profiles[name] = Profile(kind: kind, variables: vars)
        }
        return file
    }
}
