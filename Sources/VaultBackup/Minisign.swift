import Foundation
import VaultCrypto

/// A vault's Ed25519 public key in minisign's format, so the standard `minisign -V` verifies
/// Coffer archives:
///
///     untrusted comment: minisign public key <KEY ID>
///     base64("Ed" ‖ key id (8) ‖ public key (32))
public struct MinisignPublicKey: Equatable, Sendable {
    public let keyID: [UInt8]
    public let key: SigningPublicKey

    /// The key id is derived from the key (minisign draws it at random; any 8 bytes will do).
    public init(key: SigningPublicKey) {
        self.key = key
        self.keyID = Array(
            BLAKE2b.hash(Array("coffer-minisign-key-id".utf8) + key.bytes, outputByteCount: 16).prefix(8))
    }

    /// As minisign prints it: the id read as a little-endian integer, in upper-case hex.
    public var keyIDText: String { keyID.reversed().hexString.uppercased() }

    public var fileContents: String { fileContents(describing: nil) }

    /// The key file, its untrusted comment saying what the key is for (minisign shows it; it
    /// proves nothing).
    public func fileContents(describing description: String?) -> String {
        "untrusted comment: minisign public key \(keyIDText)\(description.map { " (\($0))" } ?? "")\n"
            + Data(Array("Ed".utf8) + keyID + key.bytes).base64EncodedString() + "\n"
    }

    /// Every key in a file of one or more minisign public keys (as `coffer backup pubkey --all`
    /// prints them), each a comment line and a base64 line; a bare base64 line is accepted too.
    public static func parseAll(_ text: String) throws -> [MinisignPublicKey] {
        let lines = text.split(whereSeparator: \.isNewline).map(String.init).filter {
            !$0.trimmingCharacters(in: .whitespaces).isEmpty
        }
        let keys = try lines.filter { !$0.hasPrefix("untrusted comment:") }.map { try MinisignPublicKey(parsing: $0) }
        guard !keys.isEmpty else {
            throw BackupError(
                .invalidRequest, "This is not a minisign public key (expected a comment line and a base64 line).")
        }
        return keys
    }

    public init(parsing text: String) throws {
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        let encoded =
            lines.count == 1 ? lines[0] : (lines.count >= 2 && lines[0].hasPrefix("untrusted comment:") ? lines[1] : "")
        guard let raw = Data(base64Encoded: encoded.trimmingCharacters(in: .whitespaces)).map(Array.init),
            raw.count == 42,
            raw[0] == UInt8(ascii: "E"), raw[1] == UInt8(ascii: "d")
        else {
            throw BackupError(
                .invalidRequest, "This is not a minisign public key (expected a comment line and a base64 line).")
        }
        let key = try SigningPublicKey(raw[10...])
        self.init(key: key)
        guard keyID == Array(raw[2..<10]) else {
            throw BackupError(
                .invalidRequest, "This minisign public key was not exported by Coffer (its key id does not match).")
        }
    }
}

/// A `.minisig` file, prehashed (`ED`): the signature is over BLAKE2b-512 of the file, and a
/// global signature covers signature ‖ trusted comment, so the comment cannot be edited either.
public struct MinisignSignature: Equatable, Sendable {
    public let keyID: [UInt8]
    public let signature: Signature
    public let trustedComment: String
    public let globalSignature: Signature
    public let untrustedComment: String

    public static func sign(fileDigest: [UInt8], with key: SigningKey, trustedComment: String, untrustedComment: String)
        -> MinisignSignature
    {
        let publicKey = MinisignPublicKey(key: key.publicKey)
        let signature = key.signature(for: fileDigest)
        let global = key.signature(for: signature.bytes + Array(trustedComment.utf8))
        return MinisignSignature(
            keyID: publicKey.keyID, signature: signature, trustedComment: trustedComment,
            globalSignature: global, untrustedComment: untrustedComment)
    }

    public var fileContents: String {
        "untrusted comment: \(untrustedComment)\n"
            + Data(Array("ED".utf8) + keyID + signature.bytes).base64EncodedString() + "\n"
            + "trusted comment: \(trustedComment)\n"
            + Data(globalSignature.bytes).base64EncodedString() + "\n"
    }

    public init(parsing text: String) throws {
        let malformed = BackupError(.damaged, "The signature file is malformed.")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? String($0.dropLast()) : String($0)
        }
        guard lines.count >= 4, lines[0].hasPrefix("untrusted comment: "), lines[2].hasPrefix("trusted comment: "),
            let raw = Data(base64Encoded: lines[1]).map(Array.init), raw.count == 74,
            let global = Data(base64Encoded: lines[3]).map(Array.init), global.count == 64
        else { throw malformed }
        guard raw[0] == UInt8(ascii: "E"), raw[1] == UInt8(ascii: "D") else {
            throw BackupError(
                .untrusted, "The signature is not a prehashed minisign signature (Coffer writes only those).")
        }
        keyID = Array(raw[2..<10])
        signature = try Signature(raw[10...])
        untrustedComment = String(lines[0].dropFirst("untrusted comment: ".count))
        trustedComment = String(lines[2].dropFirst("trusted comment: ".count))
        globalSignature = try Signature(global)
    }

    private init(
        keyID: [UInt8], signature: Signature, trustedComment: String, globalSignature: Signature,
        untrustedComment: String
    ) {
        self.keyID = keyID
        self.signature = signature
        self.trustedComment = trustedComment
        self.globalSignature = globalSignature
        self.untrustedComment = untrustedComment
    }

    /// The key id as minisign prints it.
    public var keyIDText: String { keyID.reversed().hexString.uppercased() }

    /// Why the signature does not hold for `fileDigest` under `publicKey`, or nil when it does.
    public func failure(fileDigest: [UInt8], publicKey: MinisignPublicKey) -> String? {
        guard keyID == publicKey.keyID else { return "it was signed by another key (key id \(keyIDText))" }
        guard publicKey.key.isValidSignature(signature, for: fileDigest) else {
            return "the signature does not match the file (it was altered after signing)"
        }
        guard publicKey.key.isValidSignature(globalSignature, for: signature.bytes + Array(trustedComment.utf8)) else {
            return "the trusted comment was altered"
        }
        return nil
    }
}
