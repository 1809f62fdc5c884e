import Foundation
import VaultStore

/// Every decoder of bytes from a sync folder, run on bytes nobody authenticated: the fuzzer's
/// entry (`scripts/fuzz sync`). In use, only a file's envelope header is read before its
/// signature and seal are checked; the bodies and the local index are authenticated first. But
/// a device of the vault (or a bug) can still seal anything, so none of them may crash on any
/// input.
package enum SyncDecoders {
    package static func decodeUntrusted(_ bytes: [UInt8]) {
        if bytes.count >= 25 {
            _ = try? SyncEnvelope.parse(bytes, vaultID: VaultID(unchecked: Array(bytes[9..<25])))
        }
        _ = try? SyncEnvelope.unpacked(bytes)
        _ = try? SyncChanges.decode(bytes)
        _ = try? SyncChanges.decode(packed: bytes)
        _ = try? SyncEnrolment.decode(bytes)
        _ = try? SyncIndex(decoding: SyncIndexData(bytes: bytes))
    }
}
