/// Why signal QA failed in an analysis window (`passed` when it did not).
public enum QAFailureType: Int, Sendable, CaseIterable, CustomStringConvertible {
  case passed = 0
  case headbandOffHead = 1
  case motionTooHigh = 2
  case eegFailure = 3

  public var description: String {
    switch self {
    case .passed: "passed"
    case .headbandOffHead: "off head"
    case .motionTooHigh: "moving too much"
    case .eegFailure: "eeg failure"
    }
  }
}
