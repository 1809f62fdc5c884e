import Foundation

/// Which archives `coffer backup prune` keeps, restic-style: the newest N, and the newest
/// archive of each of the last N days, ISO weeks and months that have any (all in UTC).
/// Only signed timestamps and sequence numbers go in; anything unsigned never gets here.
public struct RetentionPolicy: Sendable, Equatable {
    public var keepLast = 0
    public var keepDaily = 0
    public var keepWeekly = 0
    public var keepMonthly = 0

    public init(keepLast: Int = 0, keepDaily: Int = 0, keepWeekly: Int = 0, keepMonthly: Int = 0) {
        self.keepLast = keepLast
        self.keepDaily = keepDaily
        self.keepWeekly = keepWeekly
        self.keepMonthly = keepMonthly
    }

    /// One distinct archive: copies of the same signed file are one candidate, never several,
    /// so a sync tool's duplicates cannot fill the slots of older archives.
    public struct Candidate: Sendable, Equatable {
        /// What makes the archive itself (the digest its signature covers).
        public let identity: String
        public let sequence: UInt64
        public let created: Date
        public init(identity: String, sequence: UInt64, created: Date) {
            self.identity = identity
            self.sequence = sequence
            self.created = created
        }
    }

    /// The identities to keep, each with why. `protected` archives (the newest fully verified
    /// one) are always kept, and so is the newest archive of all.
    public func keep(_ candidates: [Candidate], protected: Set<String>) throws -> [String: [String]] {
        guard Set(candidates.map(\.identity)).count == candidates.count else {
            throw BackupError(
                .invalidRequest, "The same archive was offered twice: copies must be grouped before retention.")
        }
        guard keepLast + keepDaily + keepWeekly + keepMonthly > 0,
            [keepLast, keepDaily, keepWeekly, keepMonthly].allSatisfy({ $0 >= 0 })
        else {
            throw BackupError(
                .invalidRequest, "A retention policy needs at least one keep rule, and no negative count.")
        }
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let newestFirst = candidates.sorted { ($0.created, $0.sequence) > ($1.created, $1.sequence) }
        var reasons: [String: [String]] = [:]
        func mark(_ identity: String, _ reason: String) { reasons[identity, default: []].append(reason) }

        for candidate in newestFirst.prefix(keepLast) { mark(candidate.identity, "last \(keepLast)") }
        func bucketed(_ count: Int, _ label: String, _ key: (Date) -> DateComponents) {
            var seen: [DateComponents] = []
            for candidate in newestFirst where seen.count < count {
                let bucket = key(candidate.created)
                if !seen.contains(bucket) {
                    seen.append(bucket)
                    mark(candidate.identity, label)
                }
            }
        }
        bucketed(keepDaily, "daily") { calendar.dateComponents([.year, .month, .day], from: $0) }
        bucketed(keepWeekly, "weekly") { calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: $0) }
        bucketed(keepMonthly, "monthly") { calendar.dateComponents([.year, .month], from: $0) }
        if let newest = newestFirst.first { mark(newest.identity, "newest") }
        for identity in protected where candidates.contains(where: { $0.identity == identity }) {
            mark(identity, "newest verified")
        }
        return reasons
    }
}
