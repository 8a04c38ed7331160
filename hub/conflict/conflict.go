// Package conflict lets hub controllers treat an optimistic-concurrency conflict
// as what it is — another writer got there first — by requeueing quietly instead
// of logging an error. Several controllers write different conditions of the same
// binding; conflicts between them are expected.
package conflict

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// RequeueOnConflict wraps a reconciler so that a conflict error becomes a requeue.
func RequeueOnConflict(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if err != nil && apierrors.IsConflict(err) {
			// The other writer's change usually requeues us through a watch; this
			// is the backstop.
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return res, err
	})
}
