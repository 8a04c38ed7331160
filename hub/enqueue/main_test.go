package enqueue

import (
	"os"
	"testing"

	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error { env = e; return nil }))
}
