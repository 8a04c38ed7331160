package conflict

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRequeueOnConflict(t *testing.T) {
	conflictErr := apierrors.NewConflict(schema.GroupResource{Resource: "things"}, "x", errors.New("modified"))
	other := errors.New("boom")
	for _, tc := range []struct {
		name        string
		err         error
		wantErr     error
		wantRequeue bool
	}{
		{"a conflict is a quiet requeue", conflictErr, nil, true},
		{"another error stays an error", other, other, false},
		{"success stays success", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := RequeueOnConflict(reconcile.Func(func(context.Context, reconcile.Request) (ctrl.Result, error) {
				return ctrl.Result{}, tc.err
			}))
			res, err := r.Reconcile(context.Background(), reconcile.Request{})
			if !errors.Is(err, tc.wantErr) || (res.RequeueAfter > 0) != tc.wantRequeue {
				t.Errorf("got (%+v, %v), want requeue=%v err=%v", res, err, tc.wantRequeue, tc.wantErr)
			}
		})
	}
}
