"""Plain ``python -m policy.train`` trains the shipped recipe: the recipe file only writes the defaults out."""

from pathlib import Path

import yaml

from policy.train import Args, parse_args


def test_the_shipped_recipe_file_is_the_trainers_defaults():
    recipe = Path(__file__).resolve().parents[3] / "policy" / "models" / "default-train.yaml"
    from_file = parse_args(["--config", str(recipe)])
    plain = Args()
    assert {k: v for k, v in vars(from_file).items() if k != "progress"} == \
           {k: v for k, v in vars(plain).items() if k != "progress"}
    assert set(yaml.safe_load(recipe.read_text())) - {"progress"} <= set(vars(plain))
