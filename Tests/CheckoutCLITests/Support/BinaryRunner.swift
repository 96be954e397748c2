import Foundation

/// Runs the built `checkout-driver` binary the way a user would, capturing what it prints.
struct BinaryRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// The exact stdout bytes, for checks where a single byte matters.
        var stdoutData: Data
        var all: String { stdout + stderr }
    }

    /// `CHECKOUT_DRIVER_BINARY`, else the debug build next to this package.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["CHECKOUT_DRIVER_BINARY"], !path.isEmpty { return path }
        // This file is <root>/Tests/CheckoutCLITests/Support/BinaryRunner.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/checkout-driver").path
    }

    /// A clean environment: HOME and XDG folders point into `home`, so no test reads the developer's
    /// configuration or writes into their state.
    static func environment(home: String, extra: [String: String] = [:]) -> [String: String] {
        var env: [String: String] = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": home,
            "XDG_CONFIG_HOME": home + "/config",
            "XDG_STATE_HOME": home + "/state",
            "NO_COLOR": "1",
        ]
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Runs the binary with `home` as its home and working directory (a fresh temporary one when nil).
    /// Output goes through files rather than pipes: nothing can fill up and deadlock, and no reader thread is needed.
    static func run(_ arguments: [String], home: String? = nil, environment extra: [String: String] = [:],
                    directory: String? = nil) throws -> Result {
        let scratch = try Scratch()
        let home = home ?? scratch.path
        let outURL = URL(fileURLWithPath: scratch.path + "/.stdout"), errURL = URL(fileURLWithPath: scratch.path + "/.stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = environment(home: home, extra: extra)
        process.currentDirectoryURL = URL(fileURLWithPath: directory ?? home)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        let stdoutData = try Data(contentsOf: outURL)
        return Result(status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self), stdoutData: stdoutData)
    }
}

/// A temporary directory for one test, removed afterwards.
final class Scratch {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("cd-test-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    func read(_ name: String) throws -> String {
        try String(contentsOfFile: path + "/" + name, encoding: .utf8)
    }
}
