/// Where the user stands with calibration; a session needs `modelsAvailable`.
public enum UserCalibrationStatus: Int, Sendable, CaseIterable {
  case unknown = -100
  case blocked = -1
  case needsCalibration = 0
  case calibrationDone = 1
  case modelsAvailable = 2
}
