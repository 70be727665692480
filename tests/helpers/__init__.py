"""Code shared by several test files: tiny fixed-weight models and predictors whose outputs are
known by construction (:mod:`.basic_models`, :mod:`.torch_models`) and a toy sentiment world for
the counterfactual editors (:mod:`.toy_text`), and the optimiser recorder of the bitwise ``foreach`` tests
(:mod:`.optim`)."""
