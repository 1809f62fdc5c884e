import CofferTestSupport
import Foundation
import Testing
import VaultStore

/// The package's one durable-file writer: what it promises the vault, sessions, marks and archives.
@Suite struct DurableFileTests {
    @Test func replaceWritesAnOwnerOnlyFileAndLeavesNothingBeside() throws {
        let directory = TemporaryDirectory()
        let url = directory.path("mark.json")
        try DurableFile.replace(url, with: Array("first".utf8))
        try DurableFile.replace(url, with: Array("second".utf8))
        #expect(try String(contentsOf: url, encoding: .utf8) == "second")
        #expect(mode(url) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["mark.json"])
    }

    @Test func createRefusesAnExistingFileOrLinkAndKeepsIt() throws {
        let directory = TemporaryDirectory()
        let url = directory.path("archive.partial")
        try DurableFile.create(url, containing: Array("mine".utf8))
        #expect(throws: POSIXError(.EEXIST)) { try DurableFile.create(url, containing: Array("theirs".utf8)) }
        #expect(try String(contentsOf: url, encoding: .utf8) == "mine")

        let link = directory.path("planted")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory.path("elsewhere"))
        #expect(throws: POSIXError.self) { try DurableFile.create(link, containing: Array("secret".utf8)) }
        #expect(!FileManager.default.fileExists(atPath: directory.path("elsewhere").path))
    }

    @Test func replaceInAMissingFolderFailsWithTheSystemsReason() {
        let directory = TemporaryDirectory()
        #expect(throws: POSIXError(.ENOENT)) {
            try DurableFile.replace(directory.path("missing/file"), with: [UInt8]())
        }
    }
}
