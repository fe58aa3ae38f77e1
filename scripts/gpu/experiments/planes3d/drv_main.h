template <typename T> static double run(const Variant &v, int n0, int n1, int n2, int steps, int tb, T *a, T *b, std::vector<T> &result) {
  typedef int (*L)(int,int,int,T*,const T*,int);
  L f = (L)v.launch;
  size_t n = (size_t)n0*n1*n2;
  std::vector<T> h(n);
  srand(1); for (size_t i=0;i<n;i++) h[i]=(T)(rand()%1000)/1000;
  cudaMemcpy(a,h.data(),n*sizeof(T),cudaMemcpyHostToDevice);
  cudaMemcpy(b,h.data(),n*sizeof(T),cudaMemcpyHostToDevice);
  cudaEvent_t e0,e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> times;
  int reps=getenv("REPS")?atoi(getenv("REPS")):6; for (int rep=0; rep<reps; rep++) {
    cudaEventRecord(e0);
    for (int s=0; s<steps; s+=tb) { int l = std::min(tb, steps-s); int err=f(n0,n1,n2,b,a,l); if(err){printf("%s launch error %d\n",v.name,err);exit(1);} std::swap(a,b); }
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms,e0,e1); if (rep) times.push_back(ms);
    if (rep==0) { cudaMemcpy(h.data(),a,n*sizeof(T),cudaMemcpyDeviceToHost); result=h; }
  }
  cudaError_t e = cudaDeviceSynchronize(); if (e) { printf("%s: %s\n", v.name, cudaGetErrorString(e)); exit(1);} 
  std::sort(times.begin(),times.end());
  double ms=times.empty()?1:times[times.size()/2];
  return (double)(n0-2)*(n1-2)*(n2-2)*steps/(ms*1e-3)/1e9;
}
int main(int argc, char **argv) {
  int tb=getenv("TB")?atoi(getenv("TB")):3; int n=getenv("N")?atoi(getenv("N")):512, steps=getenv("STEPS")?atoi(getenv("STEPS")):99; const char *only = argc>1 ? argv[1] : "";
  size_t cells=(size_t)n*n*n;
  void *a,*b; cudaMalloc(&a,cells*8); cudaMalloc(&b,cells*8);
  std::vector<float> rf, r; std::vector<double> rd, r2; const char *ref=0;
  for (auto &v: variants) {
    if (!strstr(v.name, only)) continue;
    double g; double diff=0; bool first=false;
    if (v.size==4) { g=run<float>(v,n,n,n,steps,tb,(float*)a,(float*)b,r); if(!ref||strstr(v.name,"base")){ if(strstr(v.name,"base")) {rf=r; first=true;} } for(size_t i=0;i<cells&&rf.size();i++) diff=std::max(diff,(double)fabsf(r[i]-rf[i])); }
    else { g=run<double>(v,n,n,n,steps,tb,(double*)a,(double*)b,r2); if(strstr(v.name,"base")) {rd=r2; first=true;} for(size_t i=0;i<cells&&rd.size();i++) diff=std::max(diff,fabs(r2[i]-rd[i])); }
    printf("%-28s %8.1f GCells/s  maxdiff vs base %g\n", v.name, g, diff); fflush(stdout);
  }
}
