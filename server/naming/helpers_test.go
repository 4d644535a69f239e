package naming

import (
	"errors"

	"github.com/nacosd/nacosd/compat"
)

func asCompat(err error) *compat.Error {
	var ce *compat.Error
	if errors.As(err, &ce) {
		return ce
	}
	return nil
}

// timerHandles is how many timer handles the registry holds.
func (r *Registry) timerHandles() int { return r.tasks.Handles() }
