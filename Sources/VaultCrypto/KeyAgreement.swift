internal import CSodium
import Foundation

/// An X25519 public key (32 bytes).
public struct KeyAgreementPublicKey: FixedLengthBytes {
    public static var byteCount: Int { Int(crypto_scalarmult_BYTES) }
    public let bytes: [UInt8]
    public init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}

/// An X25519 private key in secure memory.
///
/// Used where a key must be wrapped *for* someone who is not present: a vault's recovery slot is
/// re-sealed to the recovery key's public half on every rekey, without the recovery key itself.
public struct KeyAgreementPrivateKey: Sendable {
    private let scalar: SecureBytes
    public let publicKey: KeyAgreementPublicKey

    /// The key pair whose scalar is `seed` (libsodium clamps it), so it can be re-derived.
    public init(seed: SymmetricKey) {
        Sodium.ensureInitialised()
        let scalar = SecureBytes(count: Int(crypto_scalarmult_SCALARBYTES))
        scalar.withUnsafeMutableBytes { out in seed.withUnsafeBytes { out.copyMemory(from: $0) } }
        var publicBytes = [UInt8](repeating: 0, count: KeyAgreementPublicKey.byteCount)
        let result: Int32 = scalar.withUnsafeBytes {
            crypto_scalarmult_base(&publicBytes, $0.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        // Cannot fail for the base point; a failure would mean a broken libsodium.
        precondition(result == 0, "crypto_scalarmult_base failed")
        self.scalar = scalar
        self.publicKey = KeyAgreementPublicKey(unchecked: publicBytes)
    }

    /// A fresh random key pair (an ephemeral key).
    public static func generate() -> KeyAgreementPrivateKey { KeyAgreementPrivateKey(seed: .random()) }

    /// The X25519 shared secret with `peer`. Throws for a low-order peer key (the result would be
    /// all zeros, a value an attacker could predict).
    public func sharedSecret(with peer: KeyAgreementPublicKey) throws -> SymmetricKey {
        let shared = SecureBytes(count: SymmetricKey.byteCount)
        let result: Int32 = shared.withUnsafeMutableBytes { out in
            scalar.withUnsafeBytes { secret in
                peer.bytes.withUnsafeBufferPointer { peerBytes in
                    crypto_scalarmult(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        secret.baseAddress!.assumingMemoryBound(to: UInt8.self), peerBytes.baseAddress!)
                }
            }
        }
        try Sodium.check(result, .authenticationFailed, "The X25519 public key is not usable (a low-order point).")
        return try SymmetricKey(shared)
    }
}

extension KeyAgreementPrivateKey: CustomStringConvertible, CustomReflectable {
    public var description: String { "KeyAgreementPrivateKey(redacted)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
