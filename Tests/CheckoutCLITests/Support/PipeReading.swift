import Foundation

extension FileHandle {
    /// Reads until a line containing `marker` has arrived (or the stream ends) and returns that line.
    /// Background processes print several lines; waiting for the one that matters avoids racing them.
    func readLine(containing marker: String) -> String? {
        var text = ""
        while true {
            if let line = text.split(separator: "\n").first(where: { $0.contains(marker) }) { return String(line) }
            let chunk = availableData
            if chunk.isEmpty { return nil }
            text += String(decoding: chunk, as: UTF8.self)
        }
    }
}

extension Process {
    /// Whether the process exits within `seconds`. Polled, so that a process that hangs is a failed expectation
    /// rather than a test that never returns.
    func exits(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { usleep(10_000) }
        return !isRunning
    }

    /// Stops it for good: SIGTERM, then SIGKILL if it is still running after 5 s.
    func stop() {
        if isRunning { terminate() }
        if !exits(within: 5) { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }
}
