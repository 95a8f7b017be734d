package bad

var _ = notDeclaredOnWindows()

func useIt() { notDeclaredInABody() }
