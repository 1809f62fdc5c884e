import Foundation
import Testing

@testable import CofferKit

/// The archive layouts must describe what the record codec writes today: a layout that stopped
/// fitting would only cost compression (the records go whole), so nothing else would notice.
@Suite struct ArchiveLayoutTests {
    @Test func everyLayoutFitsItsKindAsEncodedToday() {
        var covered = Set<UInt16>()
        for (_, record) in RecordCodecTests.records {
            let payload = RecordCodec.encode(record)
            let key = UInt16(payload[0]) << 8 | UInt16(payload[1])
            guard let layout = ArchiveLayouts.all[key] else { continue }
            #expect(payload.withUnsafeBytes { layout.fits($0) }, "\(record.kind)")
            covered.insert(key)
        }
        #expect(covered == Set(ArchiveLayouts.all.keys), "every layout met a record of its kind")
        for key in ArchiveLayouts.all.keys {
            #expect(RecordKind(rawValue: UInt8(key >> 8))?.currentVersion == UInt8(key & 0xff))
        }
    }
}
