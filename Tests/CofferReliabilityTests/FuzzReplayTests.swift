import CofferTestSupport
import Foundation
import Testing

/// Every committed fuzzing input — the seed corpus and each crash ever found — replayed through
/// the ordinary build of the fuzz targets: a crash found once stays a failing test until fixed.
@Suite struct FuzzReplayTests {
    static let fuzzRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fuzz")
        .standardized

    @Test(arguments: ["archive", "payload", "header", "csv", "sync", "page"]) func savedInputsReplayWithoutACrash(
        target: String
    ) throws {
        let replay = cofferBinary.deletingLastPathComponent().appendingPathComponent("CofferFuzz")
        try #require(FileManager.default.isExecutableFile(atPath: replay.path), "build CofferFuzz (swift build) first")
        let folders = ["corpus", "crashes"].map { Self.fuzzRoot.appendingPathComponent("\($0)/\(target)").path }
        let seeds = try FileManager.default.contentsOfDirectory(atPath: folders[0])
        #expect(!seeds.isEmpty, "the \(target) seed corpus is empty")
        let output = Pipe()
        let process = Process()
        process.executableURL = replay
        process.arguments = [target] + folders
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(printed)")
        #expect(printed.contains("replayed without a crash"))
    }
}
