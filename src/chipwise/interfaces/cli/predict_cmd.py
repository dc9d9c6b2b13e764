"""`chipwise predict SCENARIO`: one training or serving scenario, every number explained.

Its command imports the training or the serving layers (whichever the scenario needs) when run, to keep the CLI's
start-up fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from chipwise.interfaces.cli.common import (
    CatalogFiles,
    JsonFlag,
    SetFigures,
    catalog_from,
    print_json,
    print_model_notes,
    whatif_banner,
    whatif_lines,
)
from chipwise.interfaces.cli.plot_opt import PlotFile, write_plot
from chipwise.workload.scenario import load_scenario
from chipwise.workload.train_scenario import TrainScenario


def predict(
    scenario: Annotated[str, typer.Argument(help="A scenario YAML/JSON file, or the scenario inline.")],
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
    sources: Annotated[
        bool, typer.Option("--sources", help="Show the catalog figures used and their sources.")
    ] = False,
    plot: PlotFile = None,
) -> None:
    """Predict a training or serving scenario (the scenario keys are in docs/guide.md); a missing plan is searched."""
    cat = catalog_from(catalog_files, sets)
    sc = load_scenario(scenario, cat)
    print_model_notes(cat, sc.model)
    if isinstance(sc, TrainScenario):
        from chipwise.interfaces.cli.train_views import print_prediction, with_batch_note
        from chipwise.planner.training import predict_training

        result = with_batch_note(predict_training(cat, sc))  # --json says it as the table does
        show = print_prediction
    else:
        from chipwise.interfaces.cli.serve_views import print_serving
        from chipwise.planner.serving_predict import predict_serving

        result, show = predict_serving(cat, sc), print_serving
    # before the output, training and serving alike: a reader that stops early (`| head`) had left no plot (the
    # path itself is checked as the options are read, before the work)
    write_plot(result, plot)
    if as_json:  # what a --set or --catalog changed, as claims --json names it (only the table had said it)
        print_json({**result, "what_if": whatif_lines(cat)})
    else:
        whatif_banner(cat)
        show(result, sources)
