package bad

var _ = notDeclaredOnWindows()
