package naming

import (
	"errors"
	"math"

	"github.com/go-playground/validator/v10"

	"github.com/nacosd/nacosd/compat"
)

// rules checks naming inputs with go-playground/validator and turns the
// first failed rule into the status and message Java Nacos gives for it.
// One instance per Registry (validator caches struct metadata).
type rules struct{ v *validator.Validate }

// instanceRules are the checks of Instance.validate plus the cluster name
// rule of Cluster's constructor, in Java's order.
type instanceRules struct {
	Weight      float64 `validate:"nacos_weight"`
	ClusterName string  `validate:"nacos_cluster"`
}

// serviceRules is Service.validate's name rule.
type serviceRules struct {
	Name string `validate:"nacos_service"`
}

type clusterRules struct {
	Name string `validate:"nacos_cluster"`
}

func newRules() *rules {
	v := validator.New(validator.WithRequiredStructEnabled())
	must := func(tag string, fn validator.Func) {
		if err := v.RegisterValidation(tag, fn); err != nil {
			panic("naming: register validation " + tag + ": " + err.Error()) // programming error
		}
	}
	// Java: weight > 10000.0 || weight < 0.0 is rejected, so NaN passes.
	must("nacos_weight", func(fl validator.FieldLevel) bool { return weightOK(fl.Field().Float()) })
	must("nacos_cluster", func(fl validator.FieldLevel) bool { return clusterNameOK(fl.Field().String()) })
	must("nacos_service", func(fl validator.FieldLevel) bool { return serviceNameOK(fl.Field().String()) })
	return &rules{v: v}
}

func (r *rules) check(s any) error {
	err := r.v.Struct(s)
	if err == nil {
		return nil
	}
	var ve validator.ValidationErrors
	if !errors.As(err, &ve) || len(ve) == 0 {
		return compat.ServerError(err.Error())
	}
	fe := ve[0]
	val, _ := fe.Value().(string)
	switch fe.Tag() {
	case "nacos_weight":
		return compat.ErrWeightRange()
	case "nacos_cluster":
		return compat.ErrClusterName(val)
	case "nacos_service":
		return compat.ErrServiceName(val)
	}
	return compat.ServerError(fe.Error())
}

// Java: weight > 10000.0 || weight < 0.0 is rejected, so NaN passes.
func weightOK(w float64) bool { return math.IsNaN(w) || (w >= 0 && w <= 10000) }

// The checks below run the rules' predicates first: valid input (every
// request of a working client, e.g. each 2.x registration) skips the
// validator's reflection, which only shapes the error of invalid input.

// serviceName is Service.validate's name check.
func (r *rules) serviceName(grouped string) error {
	if serviceNameOK(grouped) {
		return nil
	}
	return r.check(serviceRules{Name: grouped})
}

// clusterName is Cluster's constructor check.
func (r *rules) clusterName(name string) error {
	if clusterNameOK(name) {
		return nil
	}
	return r.check(clusterRules{Name: name})
}

// instance is Instance.validate plus the cluster name check.
func (r *rules) instance(in *Instance) error {
	if weightOK(in.Weight) && clusterNameOK(in.ClusterName) {
		return nil
	}
	return r.check(instanceRules{Weight: in.Weight, ClusterName: in.ClusterName})
}
