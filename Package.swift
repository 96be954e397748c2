// swift-tools-version:6.0
import PackageDescription

// Dependency direction (see docs/architecture.md, "Targets and dependency direction"):
//   checkout-driver → CheckoutCLI (→ CQRencode) → CheckoutKit → Crypto / CBuildStamp / CCurl / LoopbackHTTP / Spawn /
//     Threads / WireTypes
//   SandboxEmulator → Crypto / LoopbackHTTP / GraphQL / Threads / WireTypes (never CheckoutKit: it is the other side of
//     the wire)
//   LoopbackHTTP → Threads / WireTypes
//   GraphQL → WireTypes

// Release builds put each function in a section of its own, so that the linker drops what nothing calls and lays out
// first, in one block, the functions a checkout runs (Sources/checkout-driver/FunctionOrder.txt, written by
// Scripts/order-functions). A run then maps the few MB of code it runs instead of most of the binary: the kernel maps
// 64 KiB around each code page touched (docs/architecture.md, "Memory"). lld reads the order; packed relative
// relocations (glibc 2.36) keep the position-independent binary's relocations small, and exporting no symbols keeps the
// dynamic linker's lookups for the shared libraries out of the executable's symbol table (nothing loads plugins).
let releaseSwift: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))]
let releaseLink: [LinkerSetting] = [
    .unsafeFlags(
        [
            "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
            "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/checkout-driver/FunctionOrder.txt",
            "-Xlinker", "--no-warn-symbol-ordering", "-Xlinker", "--no-export-dynamic",
        ],
        .when(configuration: .release))
]

let package = Package(
    name: "checkout-driver",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "checkout-driver", targets: ["checkout-driver"])
    ],
    targets: [
        .executableTarget(
            name: "checkout-driver", dependencies: ["CheckoutCLI", "CMalloc"], exclude: ["FunctionOrder.txt"],
            swiftSettings: releaseSwift, linkerSettings: releaseLink),
        .target(
            name: "CheckoutCLI",
            dependencies: ["CheckoutKit", "SandboxEmulator", "LoopbackHTTP", "CQRencode", "WireTypes"],
            swiftSettings: releaseSwift),
        // The built-in flows are flow files, embedded in the binary (`flow show` prints them as they ship).
        .target(
            name: "CheckoutKit",
            dependencies: ["CBuildStamp", "CCurl", "Crypto", "LoopbackHTTP", "Spawn", "Threads", "WireTypes"],
            resources: [.embedInCode("Flows/Builtin")], swiftSettings: releaseSwift),
        .target(
            name: "SandboxEmulator", dependencies: ["Crypto", "LoopbackHTTP", "GraphQL", "Threads", "WireTypes"],
            exclude: ["Centra/Schema/SOURCE.md", "Braintree/Schema/SOURCE.md"],
            // Centra's published Storefront API schema and Braintree's GraphQL API schema, served through the
            // GraphQL engine (each loaded lazily).
            resources: [
                .copy("Centra/Schema/storefront_api_schema.graphql"), .copy("Braintree/Schema/schema.graphql"),
            ], swiftSettings: releaseSwift),
        .target(name: "LoopbackHTTP", dependencies: ["WireTypes", "CEpoll", "Threads"], swiftSettings: releaseSwift),
        // The process's threads for blocking work (transfers, servers' workers), used again once their work returns.
        .target(name: "Threads", swiftSettings: releaseSwift),
        // What both sides of the wire read and write: JSON values, exact decimal money, form and HTML encoding.
        .target(name: "WireTypes", swiftSettings: releaseSwift),
        // A GraphQL engine (lexer, parser, validation, execution, introspection): the emulator serves Centra's and
        // Braintree's published schemas through it.
        .target(name: "GraphQL", dependencies: ["WireTypes"], swiftSettings: releaseSwift),
        .target(name: "Crypto", dependencies: ["COpenSSL", "COpenSSLSetup"], swiftSettings: releaseSwift),
        // OpenSSL told, before anything else calls it, to leave its memory to the OS when the process exits.
        .target(name: "COpenSSLSetup", dependencies: ["COpenSSL"]),
        // Programs started as a shell starts them (default signals, nothing blocked, no stray descriptors): the
        // browser `--open` starts, and every process the tests start.
        .target(name: "Spawn", dependencies: ["CSpawn"], swiftSettings: releaseSwift),
        .target(name: "CSpawn"),
        // The version and commit Scripts/package gives the compiler (-D…), read by `--version`.
        .target(name: "CBuildStamp"),
        // Every reader of hostile input behind one entry per reader: Scripts/fuzz runs them under libFuzzer, the
        // regression tests run the corpora in Fuzz/ through them.
        .target(
            name: "FuzzTargets",
            dependencies: ["CheckoutCLI", "CheckoutKit", "SandboxEmulator", "GraphQL", "WireTypes"]),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        // glibc's <malloc.h> (part of libc: nothing to link), for the executable's mallopt.
        .systemLibrary(name: "CMalloc"),
        // Linux's <sys/epoll.h> and <sys/eventfd.h> (part of libc), for the loopback server's worker pool.
        .systemLibrary(name: "CEpoll"),
        // QR codes of approval links drawn in the terminal (Cash App Pay).
        .systemLibrary(
            name: "CQRencode", pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]),

        .testTarget(
            name: "CheckoutCLITests",
            dependencies: ["CheckoutCLI", "SandboxEmulator", "LoopbackHTTP", "Crypto", "TestSupport"]),
        .testTarget(
            name: "CheckoutKitTests",
            dependencies: [
                "CheckoutKit", "SandboxEmulator", "LoopbackHTTP", "Crypto", "GraphQL", "WireTypes", "TestSupport",
            ]),
        .testTarget(
            name: "SandboxEmulatorTests",
            dependencies: [
                "SandboxEmulator", "LoopbackHTTP", "Crypto", "GraphQL", "Threads", "WireTypes", "TestSupport",
            ]),
        .testTarget(name: "LoopbackHTTPTests", dependencies: ["LoopbackHTTP", "CEpoll", "TestSupport"]),
        // Helpers shared by test targets: a raw socket client that shows exactly what a server wrote, `eventually`,
        // temporary directories.
        .target(name: "TestSupport", dependencies: ["Spawn"], path: "Tests/TestSupport"),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "COpenSSLSetup", "TestSupport"]),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets", "TestSupport"]),
        .testTarget(name: "WireTypesTests", dependencies: ["WireTypes"]),
        .testTarget(name: "SpawnTests", dependencies: ["Spawn", "TestSupport"]),
        .testTarget(name: "ThreadsTests", dependencies: ["Threads"]),
        // The differential corpus is read from its folder by the tests and by Scripts/graphql-differential.
        .testTarget(name: "GraphQLTests", dependencies: ["GraphQL", "TestSupport"], exclude: ["Validation/Corpus"]),
    ],
    swiftLanguageModes: [.v6]
)
