import Foundation
import TestSupport
import Testing

/// Output files are written where the user points, as the user means: symlinks followed, devices and FIFOs written
/// in place, regular files replaced atomically, failures exit 74 with the system's reason.
@Suite struct OutputFileTests {
    func fileType(_ path: String) -> FileAttributeType? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
    }

    /// The device to write to. As root, a copy of it (same major and minor numbers) in the scratch directory: a
    /// mutant of the in-place rule (Scripts/mutate) would otherwise replace the machine's real /dev/null or /dev/full
    /// with a regular file. Anyone else cannot replace anything in /dev, so the real device is the honest target.
    func device(_ name: String, in s: Scratch) throws -> String {
        guard geteuid() == 0 else { return "/dev/" + name }
        var info = stat()
        guard stat("/dev/" + name, &info) == 0 else { throw POSIXError(.ENOENT) }
        let copy = s.path + "/" + name
        guard mknod(copy, info.st_mode, info.st_rdev) == 0 else { throw POSIXError(.EPERM) }
        return copy
    }

    func leftovers(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".tmp") }
    }

    /// A one-character name (`--out t`, `--junit -`) is a file in the working directory like any other: Foundation's
    /// own path functions crashed on it (SIGILL).
    @Test func aOneCharacterNameIsAFileLikeAnyOther() async throws {
        let s = try Scratch()
        let token = try await BinaryRunner.run(
            ["applepay", "token", "--amount", "100", "--currency", "USD", "--out", "t"], home: s.path)
        #expect(token.status == 0, "\(token.all)")
        #expect(try s.read("t").hasPrefix("{"))
        let run = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--junit", "-", "--record", "h"], home: s.path)
        #expect(run.status == 0, "\(run.all)")
        #expect(try s.read("-").contains("<testsuites"))
        #expect(try s.read("h").contains("\"entries\""))
    }

    @Test func aSymlinkIsFollowedAndItsTargetWritten() async throws {
        let s = try Scratch()
        try FileManager.default.createDirectory(atPath: s.path + "/reports", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: s.path + "/run.har", withDestinationPath: "reports/real.har")
        try FileManager.default.createSymbolicLink(
            atPath: s.path + "/junit.xml", withDestinationPath: s.path + "/reports/junit-real.xml")
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--record", "run.har", "--junit", s.path + "/junit.xml"],
            home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(
            (try? FileManager.default.destinationOfSymbolicLink(atPath: s.path + "/run.har")) == "reports/real.har",
            "the link is still a link")
        #expect(try s.read("reports/real.har").contains("\"entries\""))
        #expect(try s.read("reports/junit-real.xml").contains("<testsuites"))
        #expect(leftovers(s.path + "/reports").isEmpty)
    }

    @Test(arguments: ["--record", "--junit"])
    func devNullIsWrittenInPlaceNeverReplaced(option: String) async throws {
        let s = try Scratch()
        let null = try device("null", in: s)
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", option, null], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(fileType(null) == .typeCharacterSpecial, "\(null) is still the device")
        #expect(leftovers((null as NSString).deletingLastPathComponent).isEmpty)
    }

    @Test func devStdoutIsWrittenInPlace() async throws {
        let s = try Scratch()
        // A link of its own to the standard output, as /dev/stdout is: the real one must not be at stake (see device).
        let stdout = s.path + "/stdout"
        try FileManager.default.createSymbolicLink(atPath: stdout, withDestinationPath: "/proc/self/fd/1")
        let r = try await BinaryRunner.run(
            ["applepay", "token", "--amount", "100", "--out", stdout, "-q"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stdout.hasPrefix(#"{"data":""#), "the token went to stdout: \(r.stdout.prefix(60))")
    }

    @Test func aFIFOIsWrittenInPlace() async throws {
        let s = try Scratch()
        let fifo = s.path + "/report.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader on the other end, as `checkout-driver … --junit fifo & cat fifo` would have.
        let reader = Task.detached { () -> String in
            // Opening for reading waits for the writer; reading ends when it closes.
            let handle = FileHandle(forReadingAtPath: fifo)
            return String(decoding: handle?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        }
        // A second name for the same FIFO: if the run wrongly replaced `fifo`, the reader still waits on this one.
        #expect(link(fifo, s.path + "/kept.fifo") == 0)
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--junit", fifo], home: s.path)
        // Releases a reader that no writer ever reached (it then reads nothing), so that a failure fails, not hangs.
        let release = open(s.path + "/kept.fifo", O_WRONLY | O_NONBLOCK)
        if release >= 0 { close(release) }
        #expect(r.status == 0, "\(r.all)")
        #expect(await reader.value.contains("<testsuites"))
        var info = stat()
        #expect(stat(fifo, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO, "still a FIFO")
    }

    @Test(arguments: ["--record", "--junit", "--session"])
    func aFullDeviceIsExit74SayingNoSpace(option: String) async throws {
        let s = try Scratch()
        let full = try device("full", in: s)
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", option, full], home: s.path)
        #expect(r.status == 74, "\(r.all)")
        #expect(r.stderr.contains("\(full): No space left on device"), "\(r.stderr)")
        #expect(r.stderr.contains("hint:"))
    }

    @Test func aBareFileNameIsTheWorkingDirectory() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--session", "state.json", "--record", "run.har"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(try s.read("state.json").contains("order_id"))
        #expect(try s.read("run.har").contains("\"entries\""))
        #expect(leftovers(s.path).isEmpty)
    }

    @Test func aReadOnlyStateFileIsAnErrorAndIsLeftAlone() async throws {
        let s = try Scratch()
        let state = try s.write("state.json", #"{"captures": {"f": {"kept": "yes"}}}"#)
        #expect(chmod(state, 0o400) == 0)
        defer { chmod(state, 0o600) }
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--session", state], home: s.path)
        #expect(r.status == 74, "\(r.all)")
        #expect(r.stderr.contains("cannot write --session \(state)"), "refused before the run: \(r.stderr)")
        #expect(r.stderr.contains("read-only"))
        #expect(try s.read("state.json") == #"{"captures": {"f": {"kept": "yes"}}}"#)
        #expect(leftovers(s.path).isEmpty)
    }

    @Test func aFullStdoutIsExit74() async throws {
        let s = try Scratch()
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let err = Pipe()
        let process = try TestProcess(
            BinaryRunner.binary, ["flow", "list"], environment: BinaryRunner.environment(home: s.path),
            standardOutput: .file(full), standardError: .pipe(err))
        defer { process.stop() }
        #expect(process.exits(within: 10))
        #expect(process.termination == .exited(74))
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(
            stderr.contains(
                "cannot write to standard output: No space left on device\nhint: check where the output goes: a full disk"
            ), "\(stderr)")
    }

    /// A reader that closed the pipe (`flow list | head -1`) is no write error: the command ends quietly with SIGPIPE's
    /// status, 141, by exiting (not by the signal), as other tools end.
    @Test func aClosedStdoutEndsQuietlyWith141() async throws {
        let s = try Scratch()
        let r = try BinaryRunner.runWithItsReaderGone(["flow", "list"], home: s.path)
        #expect(r.status == 141 && r.stderr.isEmpty, "\(r)")
    }
}
