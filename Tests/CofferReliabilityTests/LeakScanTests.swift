import CofferTestSupport
import Foundation
import Testing

/// The leak scan itself must find what it looks for, or its zero would mean nothing.
@Suite struct LeakScanTests {
    /// What the scan reports in `directory`, where a test planted leaks on purpose.
    func plantedHits(in directory: TemporaryDirectory) -> [String] {
        let hits = Failures()
        withKnownIssue {
            LeakScan.shared.scan(directory.url, report: false)
        } matching: { issue in
            hits.add(issue.description)
            return issue.description.contains("plaintext leak")
        }
        return hits.all
    }

    @Test func findsACanaryAndASecretWrittenInPlainText() throws {
        let directory = scannedDirectory()
        LeakScan.shared.noteProcess(
            arguments: ["account", "add", "Leaky Canary Savings"],
            environment: ["COFFER_PASSPHRASE": "a leaky passphrase"])
        let blob =
            Array(repeating: UInt8(0xA5), count: 5000) + Array("..Leaky Canary Savings..".utf8)
            + Array(repeating: 0, count: 100)
        FileManager.default.createFile(atPath: directory.path("vault.coffer-wal").path, contents: Data(blob))
        FileManager.default.createFile(
            atPath: directory.path("abc.session").path, contents: Data("xx a leaky passphrase xx".utf8))
        // Plaintext by design, so not reported: captured output and exports.
        FileManager.default.createFile(
            atPath: directory.path("stdout-1").path, contents: Data("Leaky Canary Savings".utf8))
        FileManager.default.createFile(
            atPath: directory.path("export.csv").path, contents: Data("Leaky Canary Savings".utf8))
        let hits = plantedHits(in: directory)
        // Before deinit scans again.
        for name in ["vault.coffer-wal", "abc.session"] { try FileManager.default.removeItem(at: directory.path(name)) }
        #expect(
            hits.count == 2, "one hit in the WAL (a canary) and one in the session file (a secret): \(hits)")
    }

    @Test func findsASecretOnACommandLine() {
        LeakScan.shared.noteSecret("a passphrase in argv")
        withKnownIssue {
            LeakScan.shared.noteProcess(arguments: ["unlock", "--note", "a passphrase in argv"], environment: [:])
        }
    }

    /// A note's text left in an editor's folder (or its swap file) is found: the notes tests'
    /// clean scans of their runtime folders mean something.
    @Test func findsANoteLeftInAnEditorsFolder() throws {
        let directory = scannedDirectory()
        let body = "Leaky note: the will is in the top drawer"
        LeakScan.shared.noteSecret(body)
        let folder = directory.path("coffer-note-AbC123")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        FileManager.default.createFile(
            atPath: folder.appendingPathComponent(".note.txt.swp").path, contents: Data(("\0\0" + body).utf8))
        // The note's own file too, though .txt is plaintext by design elsewhere.
        FileManager.default.createFile(
            atPath: folder.appendingPathComponent("note.txt").path, contents: Data(body.utf8))
        let hits = plantedHits(in: directory)
        try FileManager.default.removeItem(at: folder)
        #expect(hits.count == 2, "the swap file and the note itself: \(hits)")
    }
}
