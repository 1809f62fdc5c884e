import Foundation

/// Kind 16, sync state: this device's identity and progress in its sync folder. Local: never
/// published to the folder, left out of archives and exports.
///
/// Payload versions:
/// - v1: device id `raw16`, device name `string`, signing seed `bytes` (32), folder `string`,
///   last sequence published `uvarint`, clock `uvarint`, then a list of other devices: id
///   `raw16`, name `string`, public key `bytes` (32), last sequence applied `uvarint`, last heard
///   from `svarint` (Unix seconds). Upgrades with synced commit 0 (unknown).
/// - v2 (current): v1, then the vault file's commit counter `uvarint` and device id `bytes` (16,
///   or empty) when the sync was done.
extension SyncState: RecordPayload {
    static let recordKind = RecordKind.syncState

    func encodeFields(into writer: inout PayloadWriter) {
        writer.raw(device.bytes)
        writer.string(deviceName)
        writer.bytes(signingSeed)
        writer.string(folder)
        writer.unsigned(published)
        writer.unsigned(clock)
        writer.list(devices.sorted { $0.key < $1.key }) { writer, entry in
            writer.raw(entry.key.bytes)
            writer.string(entry.value.name)
            writer.bytes(entry.value.publicKey)
            writer.unsigned(entry.value.applied)
            writer.signed(entry.value.lastHeard)
        }
        writer.unsigned(syncedCommit)
        writer.bytes(syncedFile)
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> SyncState {
        let device = SyncDeviceID(unchecked: try reader.raw(SyncDeviceID.byteCount))
        let name = try reader.string()
        let seed = try reader.bytes()
        guard seed.count == 32 else { throw PayloadReader.malformed }
        let folder = try reader.string()
        let published = try reader.unsigned()
        let clock = try reader.unsigned()
        var devices: [SyncDeviceID: KnownDevice] = [:]
        for (id, known) in try reader.list({ reader in
            (
                SyncDeviceID(unchecked: try reader.raw(SyncDeviceID.byteCount)),
                KnownDevice(
                    name: try reader.string(), publicKey: try reader.bytes(), applied: try reader.unsigned(),
                    lastHeard: try reader.signed())
            )
        }) {
            devices[id] = known
        }
        return SyncState(
            device: device, deviceName: name, signingSeed: seed, folder: folder, published: published, clock: clock,
            devices: devices, syncedCommit: version >= 2 ? try reader.unsigned() : 0,
            syncedFile: version >= 2 ? try reader.bytes() : [])
    }
}

/// Kind 17, sync index: per synced record its stamp and payload digest, and tombstones. Local.
///
/// Payload versions:
/// - v1 (current): the index `bytes`, laid out as Specs/sync-format.md §7 describes.
extension SyncIndexData: RecordPayload {
    static let recordKind = RecordKind.syncIndex

    func encodeFields(into writer: inout PayloadWriter) { writer.bytes(bytes) }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> SyncIndexData {
        SyncIndexData(bytes: try reader.bytes())
    }
}

/// Kind 18, sync conflict: a value that lost to a concurrent edit on another device. Local.
///
/// Payload versions:
/// - v1 (current): record id `uuid`, losing payload `optional bytes`, losing stamp (clock `uvarint`,
///   device `raw16`), winning payload `optional bytes`, winning stamp, detected `svarint` (Unix
///   seconds), restored `bool`.
extension SyncConflict: RecordPayload {
    static let recordKind = RecordKind.syncConflict

    func encodeFields(into writer: inout PayloadWriter) {
        func stamp(_ stamp: SyncStamp) {
            writer.unsigned(stamp.clock)
            writer.raw(stamp.device.bytes)
        }
        writer.uuid(record)
        writer.optional(loser) { $0.bytes($1) }
        stamp(loserStamp)
        writer.optional(winner) { $0.bytes($1) }
        stamp(winnerStamp)
        writer.signed(detected)
        writer.bool(restored)
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> SyncConflict {
        func stamp() throws -> SyncStamp {
            SyncStamp(clock: try reader.unsigned(), device: SyncDeviceID(unchecked: try reader.raw(16)))
        }
        let record = try reader.uuid()
        let loser = try reader.optional { try $0.bytes() }
        let loserStamp = try stamp()
        let winner = try reader.optional { try $0.bytes() }
        let winnerStamp = try stamp()
        return SyncConflict(
            record: record, loser: loser, loserStamp: loserStamp, winner: winner, winnerStamp: winnerStamp,
            detected: try reader.signed(), restored: try reader.bool())
    }
}
