import CheckoutKit
import Testing

@Suite struct FileIOTests {
    /// The directory a file is written in (its temporary file goes there), for every shape of path a user may give.
    @Test(arguments: [
        ("t", ""), ("-", ""), ("/a", "/"), ("/", "/"), ("a/b", "a"), ("a/b/c/", "a/b"), ("./x", "."),
        ("/tmp/run.har", "/tmp"), ("//a", "/"),
    ])
    func theDirectoryOfAPath(path: String, directory: String) {
        #expect(FileIO.directory(of: path) == directory)
    }
}
