import FinanceCore
import Foundation
import VaultBackup

/// How old each destination's newest verified backup is: the overview, `status` and the web
/// app's Backups page all warn from the same figures.
public struct BackupAge: Encodable, Sendable, Equatable {
    /// Backups older than this many days are called out.
    public static let staleAfterDays = 30

    public let path: String
    /// ISO 8601 time of the newest archive read back and verified there; nil: never.
    public let lastVerified: String?
    /// Whole days since then; nil: never backed up there.
    public let days: Int?

    /// Never backed up, or last verified more than `staleAfterDays` ago.
    public var isStale: Bool { days.map { $0 > Self.staleAfterDays } ?? true }

    /// "today", "1 day ago", "N days ago", or nil when never.
    public var ageText: String? { days.map(Self.text(days:)) }

    static func text(days: Int) -> String {
        days <= 0 ? "today" : (days == 1 ? "1 day ago" : "\(days) days ago")
    }

    /// "today" / "1 day ago" / "N days ago" since `seconds` (Unix time).
    public static func text(since seconds: Int64, now: Date = Date()) -> String {
        text(days: Int((now.timeIntervalSince1970 - Double(seconds)) / 86_400))
    }
}

extension Ledger {
    /// Per destination (saved targets and any folder backed up to with `--to`), the newest
    /// verified backup's age, by path.
    public func backupAges(now: Date = Date()) -> [BackupAge] {
        let verified = backupState?.state.verified ?? []
        let paths = Set(backupTargets.values.map(\.path) + verified.map(\.path)).sorted()
        let formatter = ISO8601DateFormatter()
        return paths.map { path in
            let last = verified.first { $0.path == path }
            return BackupAge(
                path: path,
                lastVerified: last.map { formatter.string(from: Date(timeIntervalSince1970: TimeInterval($0.time))) },
                days: last.map { Int((now.timeIntervalSince1970 - Double($0.time)) / 86_400) })
        }
    }
}

extension Ledger {
    /// Where a backup goes when no folder is named: the vault's saved targets, then the
    /// `configured` folders (the configuration file's), each folder once.
    public func backupDestinations(configured: [String]) -> [String] {
        let saved = backupTargets.values.map(\.path)
        var seen = Set(saved.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        return saved.sorted()
            + configured.filter { seen.insert(URL(fileURLWithPath: $0).standardizedFileURL.path).inserted }
    }
}

extension BackupTrust {
    /// Where the keys came from, in words: the key files, or the vault's key history.
    public var sourceText: String {
        switch source {
        case .keyFiles(let paths): paths.joined(separator: ", ")
        case .vaultHistory(let path): "the key history of \(path)"
        case .vaultHeader(let path): "the key history in \(path)'s header (not unlocked)"
        case .publicKeyFile(let path): path
        }
    }

    /// "key 2 of 3, superseded" for a generation of the vault's history.
    public func describe(_ generation: UInt32?) -> String {
        guard let generation, let newest = keys.current?.generation else { return "key from \(sourceText)" }
        return "key \(generation) of \(newest)\(generation < newest ? ", superseded" : "")"
    }

    /// An archive's status in words and a symbol: "✓ signed (key 2 of 3, superseded)",
    /// "copy of #5 (NAME)", "✗ foreign" … (file names as found: a terminal cleans them).
    public func label(_ entry: BackupFolder.Entry) -> String {
        switch entry.status {
        case .signed:
            let renamed =
                entry.info.flatMap { $0.hasSignedName ? nil : $0.signedName }.map { ", signed as \($0)" } ?? ""
            return "✓ signed (\(describe(entry.info?.generation))\(renamed))"
        case .copy(let original): return "copy of #\(entry.info?.sequence ?? 0) (\(original.lastPathComponent))"
        case .fork: return "⚠ fork: another archive is signed as #\(entry.info?.sequence ?? 0)"
        case .foreign: return "✗ foreign"
        case .unsigned: return "✗ unsigned"
        case .damaged: return "✗ damaged"
        case .newerFormat: return "✗ newer format"
        }
    }
}
