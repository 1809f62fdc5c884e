import FinanceCore
import Foundation

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
