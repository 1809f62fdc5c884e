import CofferTestSupport
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import VaultBackup

/// Archives built to hurt: well formed and properly encrypted and signed, but by another vault,
/// unsigned, or (with the passphrase the attacker chose) carrying an xz bomb — 1 GiB of zeros in
/// 153 KiB — and huge declared sizes. Every one is refused before liblzma sees a byte, and the
/// process stays small (peak RSS measured by wait4).
@Suite struct HostileArchiveTests {
    let sandbox = Sandbox()
    let environment = ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": "2026-11-22"]
    static let attackerPassphrase = "the attacker's passphrase"
    /// Argon2id (interactive) takes 64 MiB; everything else here must fit beside it.
    static let memoryBound = 200 << 20

    static func bomb() throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../Fixtures/hostile/zeros-1GiB.xz"
        ).standardized
        return Array(try Data(contentsOf: url))
    }

    /// A format 2 body: an empty id table, then `export` compressed (as the xz stream).
    static func formatTwoBody(_ compressed: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: 16) + compressed }

    /// A signed archive of the attacker's vault holding the bomb and declaring `declared` bytes:
    /// as format 1 (the bomb is the body) or format 2 (the bomb after an empty id table).
    func hostileArchive(
        declaring declared: UInt64, in folder: String, formatVersion: UInt16 = 1, body: [UInt8]? = nil
    ) throws -> URL {
        let directory = sandbox.directory.path(folder)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let attacker = try Vault.create(
            at: sandbox.directory.path("\(folder)-attacker.coffer"),
            passphrase: try Passphrase(Self.attackerPassphrase),
            parameters: testParameters)
        let created = Date()
        let name = Archive.fileName(sequence: 1, created: created)
        let (bytes, signature) = try Archive.seal(
            compressed: try body ?? Self.bomb(), plaintextLength: declared, keys: attacker.backupKeys,
            sequence: 1, created: created, fileName: name, formatVersion: formatVersion)
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        try Data(signature.utf8).write(to: URL(fileURLWithPath: url.path + ".minisig"))
        return url
    }

    func run(_ arguments: [String], _ extra: [String: String] = [:]) throws -> (RunResult, Int) {
        let report = sandbox.directory.path("rss-\(UUID().uuidString)")
        let child = try sandbox.start(
            arguments, environment: environment.merging(extra) { $1 }, peakMemoryReport: report)
        let result = try child.result()
        let peak =
            Int(try String(contentsOf: report, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
            ?? Int.max
        return (result, peak)
    }

    func expectRefused(_ arguments: [String], _ extra: [String: String] = [:], status: Int32, says: String) throws {
        let (result, peak) = try run(arguments, extra)
        #expect(result.status == status, "\(arguments.prefix(2)): exit \(result.status): \(result.stderr)")
        #expect(result.stderr.contains(says), "\(result.stderr)")
        #expect(peak < Self.memoryBound, "\(arguments.prefix(2)) peaked at \(peak >> 20) MiB")
        print(
            "hostile archive, \(arguments.prefix(2).joined(separator: " ")): exit \(result.status), peak RSS \(peak >> 20) MiB"
        )
    }

    @Test func aForeignOrUnsignedBombIsRefusedBeforeDecompression() throws {
        #expect(try sandbox.run(["demo", "--vault", sandbox.vault.path], environment: environment).status == 0)
        #expect(try sandbox.run(["backup", "pubkey"], environment: environment).status == 0)
        let archive = try hostileArchive(declaring: (4 << 30) - 1, in: "foreign")
        try expectRefused(["backup", "verify", archive.path], status: 65, says: "signature")
        try expectRefused(["backup", "verify", archive.path, "--full"], status: 65, says: "signature")
        // Restoring it with this vault's passphrase: its own header does not open with it.
        try expectRefused(
            ["restore", archive.path, "--to", sandbox.directory.path("r1.coffer").path], status: 77, says: "passphrase")
        try FileManager.default.removeItem(atPath: archive.path + ".minisig")
        try expectRefused(["backup", "verify", archive.path], status: 65, says: "unsigned")
        try expectRefused(
            ["restore", archive.path, "--to", sandbox.directory.path("r2.coffer").path],
            ["COFFER_PASSPHRASE": Self.attackerPassphrase],
            status: 65, says: "unsigned")
    }

    @Test(arguments: [UInt64(1) << 30, (UInt64(4) << 30) - 1])
    func aBombWithItsOwnPassphraseIsRefusedBeforeDecompression(declared: UInt64) throws {
        // The attacker hands over the archive and its passphrase; signature and keys check out.
        let archive = try hostileArchive(declaring: declared, in: "self-consistent")
        let target = sandbox.directory.path("restored.coffer")
        try expectRefused(
            ["restore", archive.path, "--to", target.path], ["COFFER_PASSPHRASE": Self.attackerPassphrase],
            status: 65, says: "was not decompressed")
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    /// Format 2 is read in pieces, never into memory of the declared size: the bomb is refused at
    /// its first bytes, which are no export, and a bomb shaped as one huge block at the block size
    /// limit, with the process still small.
    @Test(arguments: [UInt64(1) << 30, (UInt64(4) << 30) - 1])
    func aFormatTwoBombIsRefusedInBoundedMemory(declared: UInt64) throws {
        let zeros = try hostileArchive(
            declaring: declared, in: "zeros-\(declared)", formatVersion: 2, body: Self.formatTwoBody(try Self.bomb()))
        try expectRefused(
            ["restore", zeros.path, "--to", sandbox.directory.path("z.coffer").path],
            ["COFFER_PASSPHRASE": Self.attackerPassphrase], status: 65, says: "not a Coffer export")
        // "CFREXPV2", then a block declared at 64 MiB, all zeros: no kind, no layout.
        let encoder = try XZ.Encoder(preset: 0, threads: 1, blockSize: 0)
        try (Array("CFREXPV2".utf8) + [0, 0, 0, 4]).withUnsafeBytes { try encoder.compress($0) }
        let zeroMiB = [UInt8](repeating: 0, count: 1 << 20)
        for _ in 0..<64 { try zeroMiB.withUnsafeBytes { try encoder.compress($0) } }
        try encoder.finish()
        let block = try hostileArchive(
            declaring: declared, in: "block-\(declared)", formatVersion: 2, body: Self.formatTwoBody(encoder.output))
        let target = sandbox.directory.path("b.coffer")
        try expectRefused(
            ["restore", block.path, "--to", target.path], ["COFFER_PASSPHRASE": Self.attackerPassphrase],
            status: 65, says: "describes its columns in a way Coffer cannot read")
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test func aDeclaredSizeBeyondTheLimitIsRefused() throws {
        let archive = try hostileArchive(declaring: UInt64.max, in: "huge")
        try expectRefused(
            ["restore", archive.path, "--to", sandbox.directory.path("r.coffer").path],
            ["COFFER_PASSPHRASE": Self.attackerPassphrase],
            status: 65, says: "more than Coffer accepts")
    }
}
