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
