import CMalloc
import CheckoutCLI
import Foundation

// The executable is deliberately thin: everything lives in CheckoutCLI so that tests can drive it in-process too.
// Two malloc arenas, not glibc's eight per core: a batch's threads each grew an arena of their own, and memory freed in
// one could not serve another (a 1,000-run batch peaked at 61-70 MB with them, 48 MB with two, no slower).
_ = mallopt(M_ARENA_MAX, 2)
let code = await CheckoutDriver.main(arguments: Array(CommandLine.arguments.dropFirst()))
// Everything the run writes is written (and its temporary files removed) by now. The process ends without running the
// libraries' exit handlers: OpenSSL's cleanup at exit frees what a worker thread may still be releasing (a libcurl
// handle, a key going out of scope), a double free seen once in parallel runs under load.
fflush(nil)
_exit(code)
