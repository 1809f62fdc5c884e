import Foundation
import Testing

@testable import VaultBackup

@Suite struct RetentionTests {
    /// Ten archives: two in January, two in February, six in March across two ISO weeks.
    static let archives: [RetentionPolicy.Candidate] = [
        (1, "2026-01-01T10:00:00Z"), (2, "2026-01-15T10:00:00Z"), (3, "2026-02-01T10:00:00Z"),
        (4, "2026-02-20T10:00:00Z"),
        (5, "2026-03-02T10:00:00Z"), (6, "2026-03-03T09:00:00Z"), (7, "2026-03-03T18:00:00Z"),
        (8, "2026-03-04T10:00:00Z"),
        (9, "2026-03-09T10:00:00Z"), (10, "2026-03-10T10:00:00Z"),
    ].map {
        RetentionPolicy.Candidate(
            identity: "#\($0.0)", sequence: $0.0, created: ISO8601DateFormatter().date(from: $0.1)!)
    }

    static let table: [(RetentionPolicy, Set<UInt64>, Set<UInt64>)] = [
        (RetentionPolicy(keepLast: 3), [], [10, 9, 8]),
        (RetentionPolicy(keepDaily: 3), [], [10, 9, 8]),
        (RetentionPolicy(keepDaily: 4), [], [10, 9, 8, 7]),  // 3 March: the evening one
        (RetentionPolicy(keepWeekly: 2), [], [10, 8]),  // ISO weeks 11 and 10
        (RetentionPolicy(keepMonthly: 3), [], [10, 4, 2]),
        (RetentionPolicy(keepMonthly: 12), [], [10, 4, 2]),
        (RetentionPolicy(keepLast: 1), [5], [10, 5]),  // the newest verified is protected
        (RetentionPolicy(keepLast: 1, keepDaily: 2, keepMonthly: 2), [], [10, 9, 4]),
    ]

    @Test(arguments: table)
    func keepsExactlyTheExpectedArchives(policy: RetentionPolicy, protected: Set<UInt64>, expected: Set<UInt64>) throws
    {
        let kept = try policy.keep(Self.archives, protected: Set(protected.map { "#\($0)" })).keys
        #expect(Set(kept) == Set(expected.map { "#\($0)" }))
    }

    @Test func refusesRulesThatKeepNothing() {
        #expect(throws: BackupError.self) { try RetentionPolicy().keep(Self.archives, protected: []) }
        #expect(throws: BackupError.self) {
            try RetentionPolicy(keepLast: -1, keepDaily: 2).keep(Self.archives, protected: [])
        }
    }

    @Test func theNewestIsAlwaysKept() throws {
        let kept = try RetentionPolicy(keepMonthly: 1).keep(Self.archives.shuffled(), protected: [])
        #expect(kept["#10"] != nil)
    }

    /// Copies must be grouped into one candidate first: two candidates with one identity are a
    /// caller's mistake, refused rather than letting a copy fill a slot.
    @Test func refusesTheSameArchiveTwice() {
        #expect(throws: BackupError.self) {
            try RetentionPolicy(keepLast: 3).keep(Self.archives + [Self.archives[9]], protected: [])
        }
    }
}
