/// Command lines the driver prints for the user to run (the commands that settle an unknown outcome).
public enum ShellWords {
    /// Joins arguments into one line a POSIX shell reads back as the same arguments: words with nothing special
    /// stay bare, anything else is single-quoted.
    public static func join(_ arguments: [String]) -> String {
        arguments.map(quote).joined(separator: " ")
    }

    static func quote(_ word: String) -> String {
        let plain =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                        || "-_./:=@%+,".unicodeScalars.contains(scalar))
            }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
