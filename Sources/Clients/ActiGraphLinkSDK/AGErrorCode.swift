/// The SDK's error codes, with the descriptions the SDK documents.
public enum AGErrorCode: Int, Sendable, CaseIterable {
  case noDeviceConnected = 0
  case deviceNotFound = 1
  case enumerationInProgress = 2
  case unrecognizedConfiguration = 3
  case sdkAccessDisabled = 4
  case connectionFailed = 5
  case wirelessTransferError = 6
  case epochDownloadError = 7
  case dateFormatError = 8
  case invalidDevice = 9
  case existingConnection = 10
  case configurationFailed = 11

  /// The description as the SDK documents it (its spelling kept).
  public var description: String {
    switch self {
    case .noDeviceConnected: "No Device Connected"
    case .deviceNotFound: "Device Not Found"
    case .enumerationInProgress: "Device Enumeration in Progress"
    case .unrecognizedConfiguration: "Unrecognized Configuration"
    case .sdkAccessDisabled: "SDK Access Disabled"
    case .connectionFailed: "Device Connection Failed"
    case .wirelessTransferError: "Wireless Tranfer Error"
    case .epochDownloadError: "Epoch Download Error"
    case .dateFormatError: "Date Format Error"
    case .invalidDevice: "Invalid ActiGraph Device"
    case .existingConnection: "Existing Connection Found (Device Already Connected)"
    case .configurationFailed: "The Last Configuration Request Received Failed"
    }
  }
}

/// An error the SDK reports: `{"error": {"code", "description", "extra"}}`.
public struct AGError: Error, Hashable, Sendable {
  public var code: AGErrorCode
  /// Details: the unrecognized keys for code 3, the serial number, the value refused.
  public var extra: String

  public init(_ code: AGErrorCode, extra: String = "") {
    self.code = code
    self.extra = extra
  }
}
