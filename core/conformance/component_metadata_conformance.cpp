// What every component declares, whatever its kind, and that every plugin file loads.
// Part of share/doc/design.md's promise that each kind has a conformance test
// every plugin of that kind passes; run on the components conformance_plugins.h
// selected (`orchestrate conformance`).
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "engine/recipe/core_tables.h"
#include "orchestrate/registry.h"

#include "conformance/conformance_plugins.h"

namespace {

using orchestrate::ComponentKind;
using namespace orchestrate::conformance;  // registry(), selected_names(), params_for(), ...

// A refused file is named with the loader's reason; the host would skip it
// with a warning, and a recipe naming its components would fail.
TEST(Conformance, EveryPluginFileInThePathLoads) {
  for (const auto& refused : orchestrate::conformance::refused_plugins()) ADD_FAILURE() << refused;
  std::string searched;
  for (const auto& dir : orchestrate::conformance::searched_directories()) searched += " " + dir;
  EXPECT_FALSE(registry().plugins().empty()) << "no plugin found in" << searched;
}

// What is checked is what was asked for: with KIND NAME, that one component
// and nothing else; without, every kind has a component (the built-in set
// covers them all), so no kind's contract goes unchecked unnoticed.
TEST(Conformance, TheSelectionIsWhatIsChecked) {
  const auto& selection = orchestrate::conformance::selection();
  for (const auto kind : orchestrate::all_component_kinds()) {
    const auto names = selected_names(kind);
    if (!selection.kind && selection.plugin_path.empty())  // every component on the path: the built-ins, at least
      EXPECT_FALSE(names.empty()) << "no " << orchestrate::to_string(kind) << " component";
    else if (!selection.kind)  // --plugin-path: its plugins only
      for (const auto& name : names)
        EXPECT_EQ(selection_only_plugins().count(registry().component(kind, name).plugin), 1u) << name;
    else if (kind == *selection.kind)
      EXPECT_EQ(names, std::vector<std::string>{selection.name});
    else
      EXPECT_TRUE(names.empty()) << orchestrate::to_string(kind) << " components selected too";
  }
}

struct ComponentRef {
  ComponentKind kind;
  std::string name;
};

// Names the instance in test listings (GoogleTest would dump its bytes).
void PrintTo(const ComponentRef& component, std::ostream* out) {
  *out << orchestrate::to_string(component.kind) << " " << component.name;
}

std::vector<ComponentRef> all_components() {
  std::vector<ComponentRef> out;
  for (const auto kind : orchestrate::all_component_kinds())
    for (const auto& name : selected_names(kind)) out.push_back({kind, name});
  return out;
}

class ComponentMetadata : public testing::TestWithParam<ComponentRef> {};

TEST_P(ComponentMetadata, HasASummaryAndDocumentedParamsWithValidDefaults) {
  const auto& info = registry().component(GetParam().kind, GetParam().name);
  EXPECT_FALSE(info.summary.empty());
  EXPECT_FALSE(info.plugin.empty());
  for (const auto& spec : info.schema.specs()) {
    SCOPED_TRACE(spec.name);
    EXPECT_FALSE(spec.doc.empty());
    if (spec.default_value) EXPECT_EQ(spec.check(*spec.default_value), "");
  }
}

// A component key the core also reads in the same table would be taken by
// the core, and the component would never see the user's value.
TEST_P(ComponentMetadata, DeclaresNoKeyTheCoreReadsInItsTable) {
  const auto& info = registry().component(GetParam().kind, GetParam().name);
  std::vector<const orchestrate::TableSpec*> tables;
  for (const auto& table : orchestrate::recipe_tables()) {
    tables.push_back(&table);
    for (const auto& list : table.lists) tables.push_back(&list);
  }
  for (const auto* table : tables) {
    if (table->kind != GetParam().kind) continue;
    EXPECT_EQ(info.schema.find("plugin"), nullptr);
    for (const auto& spec : table->schema.specs())
      EXPECT_EQ(info.schema.find(spec.name), nullptr)
          << "'" << spec.name << "' is a core key of [" << table->name << "]; rename the component's key";
  }
}

INSTANTIATE_TEST_SUITE_P(All, ComponentMetadata, testing::ValuesIn(all_components()),
                         [](const testing::TestParamInfo<ComponentRef>& info) {
                           return std::string(orchestrate::to_string(info.param.kind)) + "_" + info.param.name;
                         });

}  // namespace
