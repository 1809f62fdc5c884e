import CofferKit
import FinanceCore
import Foundation
import VaultBackup
import VaultStore

/// The parsers that read bytes an attacker can hand us. Built with `scripts/fuzz` (libFuzzer and
/// AddressSanitizer, `-D FUZZING`) each becomes a fuzzer; in an ordinary build this is a replay
/// tool that runs saved inputs (the corpus, and every crash ever found) through the same code.
enum FuzzTarget: String, CaseIterable {
    case archive, payload, header, csv, sync, page, export

    func run(_ bytes: [UInt8]) {
        switch self {
        case .archive: fuzzArchiveReader(bytes)
        case .payload:
            _ = try? RecordCodec.decode(bytes, id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .header: fuzzVaultHeaderParser(bytes)
        case .csv: fuzzStatementImport(bytes)
        case .sync: SyncDecoders.decodeUntrusted(bytes)
        case .page: fuzzPageDecoders(bytes)
        case .export: fuzzExportReader(bytes)
        }
    }
}

#if FUZZING
    /// libFuzzer calls this for every input, with the parser `COFFER_FUZZ_TARGET` names.
    let fuzzOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { data, size in
        selectedTarget.run(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
        return 0
    }

    nonisolated(unsafe) var selectedTarget = FuzzTarget.archive

    /// libFuzzer's entry when the program keeps its own `main` (SwiftPM renames an executable's).
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt
#endif

/// Fuzzing build: `COFFER_FUZZ_TARGET=csv CofferFuzz [libFuzzer flags] CORPUS`. Ordinary build:
/// `CofferFuzz TARGET FILE|DIR...` runs every file (or every file in each folder) through TARGET.
@main struct FuzzMain {
    static func main() {
        #if FUZZING
            guard let name = ProcessInfo.processInfo.environment["COFFER_FUZZ_TARGET"],
                let target = FuzzTarget(rawValue: name)
            else {
                FileHandle.standardError.write(
                    Data(
                        "Set COFFER_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n"
                            .utf8))
                exit(64)
            }
            selectedTarget = target
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runFuzzerDriver(&argc, &argv, fuzzOneInput))
        #else
            replay(Array(CommandLine.arguments.dropFirst()))
        #endif
    }

    static func replay(_ arguments: [String]) {
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(
                Data(
                    "usage: CofferFuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE|DIR...\n".utf8
                ))
            exit(64)
        }
        var count = 0
        for path in arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("no file at \(path)\n".utf8))
                exit(66)
            }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { !$0.hasPrefix(".") }
                    .sorted().map { path + "/" + $0 } : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                target.run([UInt8](data))
                count += 1
            }
        }
        print("\(target.rawValue): \(count) inputs replayed without a crash")
    }
}
