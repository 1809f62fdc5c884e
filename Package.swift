// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Coffer",
    products: [
        .executable(name: "coffer", targets: ["coffer"]),
        .library(name: "VaultCrypto", targets: ["VaultCrypto"]),
        .library(name: "VaultStore", targets: ["VaultStore"]),
        .library(name: "CofferKit", targets: ["CofferKit"]),
        .library(name: "FinanceCore", targets: ["FinanceCore"]),
        .library(name: "VaultBackup", targets: ["VaultBackup"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/yaslab/CSV.swift", from: "2.5.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/JohnSundell/Plot", from: "0.14.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        // Hummingbird's own dependencies, named by CofferWeb for their types (header names,
        // socket errors, the logger it silences).
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // System libraries. Debian: `apt-get install libsodium-dev liblzma-dev`.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // A wrapper for sqlite3_db_config (variadic): the SQLite library GRDB links.
        .systemLibrary(name: "CSQLiteHardening"),
        .systemLibrary(
            name: "CLZMA",
            pkgConfig: "liblzma",
            providers: [.apt(["liblzma-dev"]), .brew(["xz"])]
        ),
        // glibc's allocator settings (malloc.h), for the commands that hold a large vault whole.
        .systemLibrary(name: "CMalloc"),
        // Line editing and completion for `coffer shell` (BSD editline). Debian: libedit-dev.
        .systemLibrary(
            name: "CEditLine",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"]), .brew(["libedit"])]
        ),

        // Pure Swift finance logic: Foundation only, no I/O, no crypto, no SQL.
        .target(name: "FinanceCore"),
        .target(name: "VaultCrypto", dependencies: ["CSodium"]),
        .target(
            name: "VaultStore",
            dependencies: [
                "VaultCrypto", "CSQLiteHardening", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "VaultBackup",
            dependencies: ["VaultStore", "VaultCrypto", "CLZMA"]
        ),
        // The application: unit of work, change log and undo, rules that span records, backup and
        // restore services, interchange formats, record codec. No terminal, no argument parsing.
        .target(
            name: "CofferKit",
            dependencies: [
                "FinanceCore", "VaultStore", "VaultBackup", "VaultCrypto", .product(name: "CSV", package: "CSV.swift"),
                .product(name: "Plot", package: "Plot"),
            ]
        ),
        .target(
            name: "CofferCLI",
            dependencies: [
                "CofferKit", "VaultStore", "VaultCrypto", "FinanceCore", "VaultBackup", "CEditLine",
                "CMalloc", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),
        // The second face: `coffer web`, a local web app on loopback (Hummingbird, Plot HTML).
        // It parses, calls CofferKit and renders; it knows nothing of CofferCLI.
        .target(
            name: "CofferWeb",
            dependencies: [
                "CofferKit", "FinanceCore", "VaultStore", "VaultCrypto",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
                .product(name: "Plot", package: "Plot"),
            ]
        ),
        // The program: the CLI, with `coffer web` handed to the web face.
        .executableTarget(name: "coffer", dependencies: ["CofferCLI", "CofferWeb"]),
        // Proof that another front end can link the application: CofferKit and the layers
        // below, no CofferCLI, no ArgumentParser. Run by CofferEndToEndTests.
        .executableTarget(
            name: "CofferKitTour",
            dependencies: ["CofferKit", "FinanceCore", "VaultStore", "VaultCrypto"],
            path: "Examples/CofferKitTour"
        ),
        // Fuzz targets (scripts/fuzz builds them with libFuzzer); otherwise a corpus replay tool.
        .executableTarget(name: "CofferFuzz", dependencies: ["CofferKit", "VaultBackup", "VaultStore", "FinanceCore"]),

        // Helpers every test target shares (a temporary folder, dates, the KDF profile),
        // and the harness that runs the real binary in a sandbox, with its leak scan.
        .target(
            name: "CofferTestSupport",
            dependencies: ["FinanceCore", "VaultCrypto", "VaultStore", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/CofferTestSupport"
        ),
        .testTarget(name: "FinanceCoreTests", dependencies: ["FinanceCore", "CofferTestSupport"]),
        .testTarget(
            name: "VaultBackupTests", dependencies: ["CofferTestSupport", "VaultBackup", "VaultStore", "VaultCrypto"]),
        .testTarget(name: "VaultCryptoTests", dependencies: ["VaultCrypto"]),
        .testTarget(
            name: "VaultStoreTests",
            dependencies: [
                "CofferTestSupport", "VaultStore", "VaultCrypto", .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "CofferKitTests",
            dependencies: [
                "CofferTestSupport", "CofferKit", "FinanceCore", "VaultStore", "VaultCrypto",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "CofferCLITests",
            dependencies: [
                "CofferCLI", "CofferKit", "VaultStore", "VaultCrypto", "FinanceCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .testTarget(
            name: "CofferEndToEndTests",
            dependencies: [
                "CofferTestSupport", "coffer", "CofferKitTour", "CofferCLI", "CofferKit", "VaultStore", "VaultCrypto",
                "VaultBackup", "FinanceCore", .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The slow suites (crash injection, concurrent writers, disk full, hostile archives, fuzz
        // replay, the leak scan's self-test): `swift test --filter CofferReliabilityTests`.
        .testTarget(
            name: "CofferReliabilityTests",
            dependencies: [
                "CofferTestSupport", "coffer", "CofferFuzz", "CofferKit", "VaultStore", "VaultCrypto", "VaultBackup",
                "FinanceCore", .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
