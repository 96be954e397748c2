/// Command lines the driver prints for the user to run (the commands that settle an unknown outcome).
public enum ShellWords {
    /// Joins arguments into one line a POSIX shell reads back as the same arguments: words with nothing special
    /// stay bare, anything else is single-quoted.
    public static func join(_ arguments: [String]) -> String {
        arguments.map(quote).joined(separator: " ")
    }

    static func quote(_ word: String) -> String {
        // Told byte by byte: a settle command is joined before each money call, and asking each character's Unicode
        // properties cost more than the rest of making the command.
        let plain = !word.isEmpty && word.utf8.allSatisfy { bareBytes[Int($0)] }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The bytes a word may hold and stay bare: ASCII letters and digits, and `-_./:=@%+,`.
    private static let bareBytes: [Bool] = (0...255).map { value in
        let byte = UInt8(value)
        return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "-_./:=@%+,".utf8.contains(byte)
    }
}
