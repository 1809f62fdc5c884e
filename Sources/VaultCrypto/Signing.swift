internal import CSodium
import Foundation

/// An Ed25519 public key (32 bytes).
public struct SigningPublicKey: FixedLengthBytes {
    public static var byteCount: Int { Int(crypto_sign_PUBLICKEYBYTES) }
    public let bytes: [UInt8]
    public init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Verifies a detached Ed25519 signature.
    public func isValidSignature<Message: ContiguousBytes>(_ signature: Signature, for message: Message) -> Bool {
        Sodium.ensureInitialised()
        return message.withUnsafeBytes { m in
            signature.bytes.withUnsafeBufferPointer { sig in
                bytes.withUnsafeBufferPointer { pk in
                    crypto_sign_verify_detached(
                        sig.baseAddress!, m.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        UInt64(m.count), pk.baseAddress!) == 0
                }
            }
        }
    }
}

/// A detached Ed25519 signature (64 bytes).
public struct Signature: FixedLengthBytes {
    public static var byteCount: Int { Int(crypto_sign_BYTES) }
    public let bytes: [UInt8]
    public init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}

/// An Ed25519 signing key. The 64-byte secret (seed ‖ public key) stays in secure memory.
public struct SigningKey: Sendable {
    private let secret: SecureBytes
    public let publicKey: SigningPublicKey

    /// The key pair determined by a 32-byte seed, so a vault can re-derive its signing key from
    /// its master key instead of storing a second secret.
    public init(seed: SymmetricKey) {
        Sodium.ensureInitialised()
        let secret = SecureBytes(count: Int(crypto_sign_SECRETKEYBYTES))
        var publicBytes = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        let result: Int32 = secret.withUnsafeMutableBytes { sk in
            seed.withUnsafeBytes { seedBytes in
                crypto_sign_seed_keypair(
                    &publicBytes, sk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    seedBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        precondition(result == 0, "crypto_sign_seed_keypair failed")
        self.secret = secret
        self.publicKey = SigningPublicKey(unchecked: publicBytes)
    }

    /// A fresh random key pair.
    public static func generate() -> SigningKey { SigningKey(seed: .random()) }

    public func signature<Message: ContiguousBytes>(for message: Message) -> Signature {
        var signature = [UInt8](repeating: 0, count: Signature.byteCount)
        let result: Int32 = message.withUnsafeBytes { m in
            secret.withUnsafeBytes { sk in
                crypto_sign_detached(
                    &signature, nil, m.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    UInt64(m.count), sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        precondition(result == 0, "crypto_sign_detached failed")
        return Signature(unchecked: signature)
    }
}

extension SigningKey: CustomStringConvertible, CustomReflectable {
    public var description: String { "SigningKey(public: \(publicKey.bytes.hexString))" }
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKey], displayStyle: .struct) }
}
