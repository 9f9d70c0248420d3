#include "engine/dim_reduce/subspace_descent.h"

#include <ATen/ATen.h>

#include <cmath>

#include "orchestrate/error.h"

namespace orchestrate {
namespace {

// MindSpore's threshold for a curvature pair worth an update: below it, y.s
// is noise (or the loss is not locally convex along s) and B is kept.
constexpr double kMinimumCurvature = 1e-20;
// The safeguarded rule's test: the cosine of the angle between y and s.
constexpr double kMinimumCurvatureCosine = 0.01;

}  // namespace

SubspaceDescent::SubspaceDescent(at::Tensor components, SubspaceDescentSettings settings)
    : components_(std::move(components)), settings_(settings) {
  if (components_.dim() != 2) throw Error("dim_reduce: the components must be a matrix [k, n]");
  const auto k = components_.size(0);
  const auto options = components_.options().dtype(at::kFloat);
  inverse_hessian_ = at::eye(k, options);
  previous_gradient_ = at::zeros({k}, options);
  last_step_ = at::zeros({k}, options);
  residual_momentum_ = at::zeros({components_.size(1)}, options);
}

SubspaceDescent::Step SubspaceDescent::step(const at::Tensor& weights, const at::Tensor& gradient, double loss,
                                            const std::function<double(const at::Tensor&)>& loss_at) {
  const auto g = gradient.to(at::kFloat).reshape({-1});
  if (g.size(0) != components_.size(1))
    throw Error("dim_reduce: the gradient has " + std::to_string(g.size(0)) + " entries and the components " +
                std::to_string(components_.size(1)) + "; the PCA matrix was made for another model");
  const auto g_k = at::mv(components_, g);
  if (has_previous_) {
    const auto y = g_k - previous_gradient_;
    const double curvature = at::dot(y, last_step_).item<double>();
    const double threshold = settings_.safeguarded
                                 ? kMinimumCurvatureCosine * at::norm(y).item<double>() * at::norm(last_step_).item<double>()
                                 : 0.0;
    if (curvature > kMinimumCurvature && curvature > threshold) {
      const double r = 1.0 / curvature;
      const auto t = at::eye(g_k.size(0), g_k.options()) - r * at::outer(y, last_step_);
      inverse_hessian_ = at::matmul(at::matmul(t.t(), inverse_hessian_), t) + r * at::outer(last_step_, last_step_);
    }
  }
  has_previous_ = true;
  previous_gradient_ = g_k;

  const auto d_k = -at::mv(inverse_hessian_, g_k);
  const auto direction = at::mv(components_.t(), d_k);
  const double slope = at::dot(g_k, d_k).item<double>();

  Step result;
  double scale = 1.0;
  for (int m = 0; m < settings_.max_search; ++m) {
    scale = std::pow(settings_.rho, m);
    ++result.trials;
    const double trial_loss = loss_at(weights + scale * direction);
    if (loss + settings_.sigma * scale * slope > trial_loss) {
      last_step_ = scale * d_k;
      result.accepted = true;
      break;
    }
  }
  result.step = scale;
  if (settings_.safeguarded && !result.accepted) {
    result.step = scale = 0.0;
    inverse_hessian_ = at::eye(g_k.size(0), g_k.options());
    has_previous_ = false;
  }

  residual_momentum_ = settings_.gamma * residual_momentum_ + (g - at::mv(components_.t(), g_k));
  result.weights = weights + scale * direction - settings_.alpha * residual_momentum_;
  return result;
}

std::vector<std::pair<std::string, at::Tensor>> SubspaceDescent::state() const {
  return {{"inverse_hessian", inverse_hessian_},
          {"previous_gradient", previous_gradient_},
          {"last_step", last_step_},
          {"residual_momentum", residual_momentum_},
          {"has_previous", at::scalar_tensor(has_previous_ ? 1 : 0, at::kInt)}};
}

void SubspaceDescent::load_state(const std::vector<std::pair<std::string, at::Tensor>>& state,
                                 const std::string& source) {
  auto take = [&](const std::string& name, at::Tensor& into) {
    for (const auto& [key, value] : state)
      if (key == name) {
        if (value.sizes() != into.sizes())
          throw DataError(source + ": dim_reduce state '" + name + "' has another shape than this model's; "
                          "resume with the PCA matrix and model it was saved with");
        into = value.to(into.device(), into.scalar_type());
        return;
      }
    throw DataError(source + ": no dim_reduce state '" + name + "'; it was not saved by a dim_reduce run");
  };
  take("inverse_hessian", inverse_hessian_);
  take("previous_gradient", previous_gradient_);
  take("last_step", last_step_);
  take("residual_momentum", residual_momentum_);
  at::Tensor flag = at::zeros({}, at::kInt);
  take("has_previous", flag);
  has_previous_ = flag.item<int>() != 0;
}

}  // namespace orchestrate
