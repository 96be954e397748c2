import Foundation

/// Builds a `Configuration` from the config file, `.env`, the process environment and flags.
public struct ConfigurationLoader: Sendable {
    public var processEnvironment: [String: String]
    public var workingDirectory: String

    public init(processEnvironment: [String: String] = ProcessInfo.processInfo.environment,
                workingDirectory: String = FileManager.default.currentDirectoryPath) {
        self.processEnvironment = processEnvironment
        self.workingDirectory = workingDirectory
    }

    /// `$XDG_CONFIG_HOME/checkout-driver/config.json`.
    public var defaultConfigPath: String {
        let base = processEnvironment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (home + "/.config")
        return base + "/checkout-driver/config.json"
    }

    var home: String { processEnvironment["HOME"] ?? NSHomeDirectory() }

    /// - Parameters:
    ///   - environmentFlag: `--env`, when given.
    ///   - configPath: `--config`, when given (then the file must exist).
    ///   - flagValues: `--set NAME=VALUE` from the command line: above everything else.
    ///   - emulatorValues: for `local`, the embedded emulator's endpoints and credentials.
    public func load(environmentFlag: String?, configPath: String?, flagValues: [String: String] = [:],
                     emulatorValues: (String) -> [String: String] = { _ in [:] }) throws(Diagnostic) -> Configuration {
        let dotEnv = try DotEnv.load(path: workingDirectory + "/.env")
        let file = try ConfigFile.load(path: configPath ?? defaultConfigPath, explicit: configPath != nil)
        let name = environmentFlag ?? processEnvironment["CHECKOUT_DRIVER_ENV"].flatMap { $0.isEmpty ? nil : $0 }
            ?? dotEnv["CHECKOUT_DRIVER_ENV"] ?? file.defaultProfile ?? "local"

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
            throw .usage("unknown environment '\(name)'\(suggestion)",
                         hint: "use local, sandbox, or a profile from \(configPath ?? defaultConfigPath): \(choices.joined(separator: ", "))")
        }

        var config = Configuration(environment: name, kind: kind, values: [:])
        for v in Configuration.variables { if let d = v.defaultValue { config.set(v.name, d, source: "default") } }
        for (k, v) in profileValues { config.set(k, v, source: "profile \(name)") }
        for (k, v) in dotEnv { config.set(k, v, source: ".env") }
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
                throw .configuration("\(variable.name) '\(value)' (from \(config.source(of: variable.name) ?? "configuration")) \(problem)",
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
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
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
                throw .data("\(source):\(number + 1): expected KEY=value, found '\(line.prefix(40))'",
                            hint: "fix or remove that line; comments start with #")
            }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw .data("\(source):\(number + 1): '\(key)' is not a variable name")
            }
            var value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            // A quoted value may be followed by a comment: `KEY="value" # note`.
            if value.count >= 2, let q = value.first, q == "\"" || q == "'", let close = value.lastIndex(of: q),
               close > value.startIndex,
               value[value.index(after: close)...].trimmingCharacters(in: .whitespaces).first.map({ $0 == "#" }) ?? true {
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
        guard let data = FileManager.default.contents(atPath: path) else {
            if explicit { throw .configuration("config file \(path) does not exist", hint: "check --config, or drop it to use \(path)") }
            return ConfigFile()
        }
        let json: JSON
        do { json = try JSON.parse(data) } catch {
            throw .data("\(path): not valid JSON: \(error)", hint: "see README \"Configuration\" for the file's shape")
        }
        guard case .object(let root) = json else { throw .data("\(path): $: expected an object") }
        var file = ConfigFile()
        for key in root.keys where !["default", "profiles", "$schema"].contains(key) {
            throw .data("\(path): $.\(key): unknown key", hint: "the file has \"default\" and \"profiles\"")
        }
        if let d = root["default"] {
            guard let s = d.stringValue else { throw .data("\(path): $.default: expected a profile name") }
            file.defaultProfile = s
        }
        for (name, value) in root["profiles"]?.objectValue ?? [:] {
            let at = "\(path): $.profiles.\(name)"
            guard case .object(let p) = value else { throw .data("\(at): expected an object") }
            let kindName = p["environment"]?.stringValue ?? "sandbox"
            guard let kind = Configuration.Kind(rawValue: kindName) else {
                throw .data("\(at).environment: expected \"local\" or \"sandbox\", found \"\(kindName)\"")
            }
            var vars: [String: String] = [:]
            for (k, v) in p["variables"]?.objectValue ?? [:] {
                guard let s = v.stringValue else { throw .data("\(at).variables.\(k): expected a string") }
                vars[k] = s
            }
            file.profiles[name] = Profile(kind: kind, variables: vars)
        }
        return file
    }
}
