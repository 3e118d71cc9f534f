/// An ATT error code (Core Specification Vol 3 Part F 3.4.1.1), as a device
/// answers a request it refuses.
///
/// A device model throws one from `read` or `write`; the central sees the same
/// code in `GATTError.Code.attribute`. Codes `0x80`–`0x9F` are the
/// application's own (`ATTError.application(_:)`).
public struct ATTError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
  /// The error code byte.
  public let code: UInt8

  public init(code: UInt8) {
    self.code = code
  }

  /// An application error, `0x80`–`0x9F`.
  public static func application(_ code: UInt8) -> ATTError {
    precondition((0x80...0x9F).contains(code), "application ATT errors are 0x80-0x9F, not \(code)")
    return ATTError(code: code)
  }

  public static let invalidHandle = ATTError(code: 0x01)
  public static let readNotPermitted = ATTError(code: 0x02)
  public static let writeNotPermitted = ATTError(code: 0x03)
  public static let invalidPDU = ATTError(code: 0x04)
  public static let insufficientAuthentication = ATTError(code: 0x05)
  public static let requestNotSupported = ATTError(code: 0x06)
  public static let invalidOffset = ATTError(code: 0x07)
  public static let insufficientAuthorization = ATTError(code: 0x08)
  public static let prepareQueueFull = ATTError(code: 0x09)
  public static let attributeNotFound = ATTError(code: 0x0A)
  public static let attributeNotLong = ATTError(code: 0x0B)
  public static let insufficientEncryptionKeySize = ATTError(code: 0x0C)
  public static let invalidAttributeValueLength = ATTError(code: 0x0D)
  // The Core Specification's own name for 0x0E ("Unlikely Error").
  // swift-format-ignore: DontRepeatTypeInStaticProperties
  public static let unlikelyError = ATTError(code: 0x0E)
  public static let insufficientEncryption = ATTError(code: 0x0F)
  public static let unsupportedGroupType = ATTError(code: 0x10)
  public static let insufficientResources = ATTError(code: 0x11)
  public static let databaseOutOfSync = ATTError(code: 0x12)
  public static let valueNotAllowed = ATTError(code: 0x13)
  /// Common profile error (Core Specification Supplement 1.2): write request rejected.
  public static let writeRequestRejected = ATTError(code: 0xFC)
  /// Common profile error: Client Characteristic Configuration descriptor improperly configured.
  public static let cccdImproperlyConfigured = ATTError(code: 0xFD)
  /// Common profile error: procedure already in progress.
  public static let procedureAlreadyInProgress = ATTError(code: 0xFE)
  /// Common profile error: out of range.
  public static let outOfRange = ATTError(code: 0xFF)

  /// Whether the code is in the application range `0x80`–`0x9F`.
  public var isApplicationError: Bool { (0x80...0x9F).contains(code) }

  /// The specification's name for the code, e.g. `Write Not Permitted`.
  public var name: String {
    switch code {
    case 0x01: "Invalid Handle"
    case 0x02: "Read Not Permitted"
    case 0x03: "Write Not Permitted"
    case 0x04: "Invalid PDU"
    case 0x05: "Insufficient Authentication"
    case 0x06: "Request Not Supported"
    case 0x07: "Invalid Offset"
    case 0x08: "Insufficient Authorization"
    case 0x09: "Prepare Queue Full"
    case 0x0A: "Attribute Not Found"
    case 0x0B: "Attribute Not Long"
    case 0x0C: "Encryption Key Size Too Short"
    case 0x0D: "Invalid Attribute Value Length"
    case 0x0E: "Unlikely Error"
    case 0x0F: "Insufficient Encryption"
    case 0x10: "Unsupported Group Type"
    case 0x11: "Insufficient Resources"
    case 0x12: "Database Out Of Sync"
    case 0x13: "Value Not Allowed"
    case 0x80...0x9F: "Application Error"
    case 0xFC: "Write Request Rejected"
    case 0xFD: "CCCD Improperly Configured"
    case 0xFE: "Procedure Already In Progress"
    case 0xFF: "Out Of Range"
    case 0xE0...0xFB: "Common Profile Error"
    default: "Reserved"
    }
  }

  /// `ATT error 0x03 (Write Not Permitted)`.
  public var description: String {
    let hex = String(code, radix: 16, uppercase: true)
    return "ATT error 0x\(hex.count < 2 ? "0" + hex : hex) (\(name))"
  }
}
