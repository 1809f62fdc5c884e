import Foundation
import Testing

@testable import FinanceCore

/// New record ids: RFC 9562 version 8 layout, always growing, unique within a process whatever
/// its clock does, and apart between processes.
@Suite struct RecordIDsTests {
    static func words(_ id: UUID) -> (high: UInt64, low: UInt64) {
        withUnsafeBytes(of: id.uuid) {
            (
                UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    @Test func idsCarryTheMillisecondVersionAndVariant() {
        var issuer = RecordIDs.Issuer(random: 0x0123_4567_89AB_CDEF, clock: { 1_795_000_000_123 })
        let id = issuer.next()
        let (high, low) = Self.words(id)
        #expect(high >> 16 == 1_795_000_000_123)
        #expect(high >> 12 & 0xF == 8, "version 8")
        #expect(low >> 62 == 0b10, "RFC 9562 variant")
        #expect(low & (1 << 62 - 1) == 0x0123_4567_89AB_CDEF & (1 << 62 - 1))
        // Foundation reads the same bytes as a version 8 UUID.
        #expect(id.uuidString.dropFirst(14).first == "8")
    }

    /// A clock that stands still, steps back an hour, or is outrun by 5,000 ids in one
    /// millisecond: every id is still larger than the one before, so none repeats.
    @Test func idsOnlyGrowWhateverTheClockDoes() {
        var now: UInt64 = 1_795_000_000_000
        var issuer = RecordIDs.Issuer(random: 42, clock: { now })
        var ids: [UUID] = []
        for step in 0..<20_000 {
            switch step {
            case 5_000: now -= 3_600_000
            case 10_000: now += 3_600_000 + 2
            case 15_000...: now += UInt64(step % 2)
            default: break
            }
            ids.append(issuer.next())
        }
        let words = ids.map(Self.words)
        for (before, after) in zip(words, words.dropFirst()) {
            #expect((before.high, before.low) < (after.high, after.low))
        }
        #expect(Set(ids).count == ids.count)
    }

    /// Two processes (two issuers) in the same millisecond make different ids: their random
    /// halves differ.
    @Test func twoProcessesInOneMillisecondStayApart() {
        var first = RecordIDs.Issuer(random: 1, clock: { 1_795_000_000_000 })
        var second = RecordIDs.Issuer(random: 2, clock: { 1_795_000_000_000 })
        let ids = (0..<100).flatMap { _ in [first.next(), second.next()] }
        #expect(Set(ids).count == 200)
    }

    /// The process's own issuer, from any thread: every id distinct, and a batch after the ids
    /// before it.
    @Test func theSharedIssuerIsSafeAcrossThreads() {
        let perThread = 5_000
        let lock = NSLock()
        nonisolated(unsafe) var all: [UUID] = []
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let mine = (0..<perThread).map { _ in RecordIDs.next() }
            lock.lock()
            all += mine
            lock.unlock()
        }
        #expect(Set(all).count == 4 * perThread)
        let last = all.map(Self.words).max { ($0.high, $0.low) < ($1.high, $1.low) }!
        let batch = RecordIDs.next(count: 10).map(Self.words)
        #expect((last.high, last.low) < (batch[0].high, batch[0].low))
        #expect(zip(batch, batch.dropFirst()).allSatisfy { ($0.high, $0.low) < ($1.high, $1.low) })
    }
}
